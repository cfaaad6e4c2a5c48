#pragma once
// The numbers the attn-res page reads from one result record (ledger data and timing).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::attn_res {

struct CheckpointDepth {
  std::int64_t tokens = 0;
  double mean_entropy = 0;
  double mean_normalised_entropy = 0;
  double mean_diversity = 0;
  double collapse_fraction = 0;
};

struct UnitMetrics : training::RunIdentity {
  std::int64_t parameters = 0;
  std::int64_t attnres_parameters = 0;
  std::vector<std::pair<std::int64_t, double>> validation_curve;  // (tokens, loss)
  double final_validation_loss = 0;
  std::int64_t stored_residual_sources = 0;
  double stored_residual_bytes = 0;                   // formula (residual_memory.hpp)
  std::vector<double> final_grad_norm_by_sublayer;    // at the last checkpoint, sublayer 0 .. 2L-1
  std::vector<CheckpointDepth> depth;                 // AttnRes arms: every checkpoint; empty otherwise
  std::vector<nlohmann::json> final_aggregations;     // AttnRes arms: per aggregation at the budget
  std::optional<double> train_tokens_per_s;           // timing
  std::optional<double> peak_training_bytes;          // timing: CUDA allocator only
  std::int64_t loss_spikes = 0;
};

// nullopt unless the record is an attn-res result with at least one evaluation.
std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record);

}  // namespace k3lab::experiments::attn_res
