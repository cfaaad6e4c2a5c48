#pragma once
// The numbers the situ-qat page reads from one result record (ledger data only).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::situ_qat {

// One activation checkpoint (activation_probe.hpp).
struct ActivationCheckpoint {
  std::int64_t tokens = 0;
  double hidden_p99 = 0, hidden_p999 = 0, input_p99 = 0, input_p999 = 0;
  double error_weights = 0, error_inputs = 0, error_hidden = 0, error_outputs = 0;
  double saturation_gate = 0, saturation_up = 0, saturation_both = 0;
};

struct UnitMetrics : training::RunIdentity {
  std::vector<std::pair<std::int64_t, double>> validation_curve;  // (tokens, loss)
  double final_validation_loss = 0;
  std::vector<ActivationCheckpoint> checkpoints;  // in token order; the last one at the budget
  std::int64_t loss_spikes = 0;                   // the protocol's definition (loss_spikes.hpp)

  const ActivationCheckpoint& final_checkpoint() const { return checkpoints.back(); }
  // Saturation time: the mean over the activation checkpoints of the saturated fraction (gate and up
  // pre-activations pooled), i.e. the share of the sampled pre-activations in the saturation region
  // averaged over training time.
  double mean_saturation() const;
};

// nullopt unless the record is a situ-qat result with at least one activation checkpoint.
std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record);

}  // namespace k3lab::experiments::situ_qat
