#pragma once
// The numbers the hybrid-attention page reads from one result record (ledger data and timing).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/training/arm_runs.hpp"

namespace k3lab::experiments::hybrid_attention {

struct UnitMetrics : training::RunIdentity {
  std::int64_t parameters = 0;
  std::int64_t training_window = 0;
  std::int64_t longest_length = 0;
  std::vector<std::pair<std::int64_t, double>> validation_curve;  // (tokens, loss)
  double final_validation_loss = 0;
  std::map<std::int64_t, double> mqar_accuracy;    // at the last evaluation, by length
  std::map<std::int64_t, double> needle_accuracy;
  // Long-context retrieval: the mean of the MQAR and needle accuracies at a length.
  double retrieval_at(std::int64_t length) const;
  std::vector<std::pair<std::int64_t, double>> loss_by_position;  // (bucket start, loss)
  std::optional<double> state_norm_ratio;  // KDA state norm at the longest length / at the training window
  std::map<std::int64_t, std::int64_t> state_bytes;              // measured inference state, by length
  std::map<std::int64_t, std::int64_t> peak_inference_bytes;     // CUDA allocator, by length (empty on CPU)
  std::map<std::int64_t, double> prefill_tokens_per_s, decode_tokens_per_s;
  std::optional<double> train_tokens_per_s;
  std::optional<std::int64_t> peak_training_bytes;
  double decode_logit_drift = 0;
  double decode_state_drift = 0;
  std::int64_t loss_spikes = 0;

  // Peak inference memory at a length: the CUDA allocator peak when measured, else the measured
  // inference-state bytes (KV/latent cache + recurrent and conv state).
  double inference_memory_at(std::int64_t length) const;
  bool memory_is_allocator_peak() const { return !peak_inference_bytes.empty(); }
};

// nullopt unless the record is a hybrid-attention result with final probes.
std::optional<UnitMetrics> unit_metrics(const nlohmann::json& record);

}  // namespace k3lab::experiments::hybrid_attention
