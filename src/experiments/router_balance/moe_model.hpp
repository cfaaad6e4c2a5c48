#pragma once
// router-balance's proxy model (models/moe_lm.hpp: attention + routed MoE in every layer, tied
// embeddings) shaped by the parameters, and the training task that trains it on the shared trainer:
//   loss        next-token cross-entropy (the primary loss, recorded), plus the aux-loss arm's balance
//               term for the gradient only
//   extras      the routing measurements of each logged update (moe_block.hpp)
//   after_step  the bias control's update from the step's routing (after the optimizer update, so a
//               batch is never routed with its own bias), the oscillation tracker over measured
//               updates, and the routing artifact
//   state       the correction biases observed so far, so a resumed run rebuilds its oscillation
// Identical across arms but for the routing control: same shapes and init from the unit's seed.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "k3lab/models/moe_lm.hpp"
#include "k3lab/train/training_task.hpp"
#include "router_balance/moe_block.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/routing_metrics.hpp"

namespace k3lab::experiments::router_balance {

models::MoeLmOptions moe_lm_options(const Parameters& p, models::RouterControl control);

class MoeProxyTask : public train::TrainingTask {
 public:
  // `routing_log`: the routing artifact's path (empty: none).
  MoeProxyTask(const Parameters& p, models::RouterControl control, std::uint64_t init_seed,
               std::filesystem::path routing_log);

  torch::nn::Module& model() override { return *model_; }
  nlohmann::json identity() const override;
  train::TaskLoss loss(const train::Batch& batch) override;
  nlohmann::json after_step(const train::StepReport& report) override;
  bool has_state() const override { return true; }
  void save_state(torch::serialize::OutputArchive& archive) const override;
  void restore_state(torch::serialize::InputArchive& archive) override;
  void begin(std::int64_t step) override;

  const OscillationTracker& oscillation() const { return oscillation_; }
  const std::filesystem::path& routing_log() const { return log_.path(); }

 private:
  bool logged(std::int64_t step) const;
  void observe_biases();

  models::MoeLmOptions options_;
  std::uint64_t init_seed_;
  std::int64_t warmup_updates_, log_interval_updates_;
  double fixed_step_;
  models::MoeLm model_{nullptr};
  std::vector<models::RoutingStats> routing_;  // the last forward's, one per layer
  std::vector<BlockMeasurement> measured_;     // of the last forward, on logged updates
  OscillationTracker oscillation_;
  std::vector<torch::Tensor> observed_biases_;  // (layers, experts) float32 per observation, in order
  RoutingLog log_;
};

}  // namespace k3lab::experiments::router_balance
