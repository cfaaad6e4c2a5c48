#pragma once
// The numbers the per-head-muon page reads from one result record (ledger data only).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::per_head_muon {

struct UnitMetrics : training::RunIdentity {
  std::string phase;
  int config = 0;
  double learning_rate = 0, weight_decay = 0;
  std::vector<std::pair<std::int64_t, double>> validation_curve;  // (tokens, loss)
  std::vector<std::pair<std::int64_t, double>> dispersion_curve;  // (tokens, mean CV over layers and q/k/v)
  std::vector<std::pair<std::int64_t, double>> diversity_curve;   // (tokens, mean over layers and q/k)
  double final_validation_loss = 0;
  double final_training_loss = 0;  // the last step's loss
  double mean_dispersion = 0;      // mean over the logged steps
  double final_head_diversity = 0;
  std::optional<double> step_time_s;  // record timing (wall clock); absent without it
};

// nullopt unless the record is a per-head-muon result with at least one evaluation.
std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record);

}  // namespace k3lab::experiments::per_head_muon
