#pragma once
// What router-balance measures of its MoE blocks' routing (definitions: routing_metrics.hpp):
//   per block and logged update   cv, max_to_mean, dropped_rate (ledger) and the raw loads, drops
//                                 and correction bias after the update (the routing artifact)
//   per logged update             the means over blocks (ledger "logged")
//   per run                       the means over every logged (update, block) pair (ledger "metrics")
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/models/moe_block.hpp"

namespace k3lab::experiments::router_balance {

struct BlockMeasurement {
  std::vector<double> loads;  // routes per expert before dropping
  std::int64_t dropped = 0;
  double cv = 0, max_to_mean = 0, dropped_rate = 0;
};

// One measurement per block of a forward's routing (one RoutingStats per layer).
std::vector<BlockMeasurement> measure_blocks(const std::vector<models::RoutingStats>& routing);

// {"expert_load_cv", "max_to_mean_load", "dropped_token_rate": means over blocks, "layers": [{"cv",
// "max_to_mean", "dropped_rate"} per block]}: a logged update's record without its update and loss.
nlohmann::json logged_measurements(const std::vector<BlockMeasurement>& blocks);

// {"expert_load_cv", "max_to_mean_load", "dropped_token_rate"}: the means over every block of every
// logged record (records as logged_measurements writes them).
nlohmann::json run_routing_metrics(const nlohmann::json& logged);

// The routing artifact: one JSON line per logged update, {"update", "primary_loss", "layers":
// [{"loads", "dropped", "bias_after_update"}]}, written through (a killed run loses no line).
class RoutingLog {
 public:
  explicit RoutingLog(std::filesystem::path path);  // empty path: no artifact
  // Opens the artifact for a run that starts at `step`: lines of earlier updates are kept (a resumed
  // run continues the file), later ones (written after the checkpoint it resumes) are cut.
  void open_at(std::int64_t step);
  void write(std::int64_t update, double primary_loss, const std::vector<BlockMeasurement>& blocks,
             const std::vector<std::vector<double>>& biases);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::ofstream out_;
};

}  // namespace k3lab::experiments::router_balance
