#pragma once
// The parameters block of experiments/per-head-muon.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::per_head_muon {

struct Model {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;
  int n_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden = 0;
};

// One point of the search every optimizer gets (1-based id in unit ids).
struct Configuration {
  int id = 0;
  double learning_rate = 0;
  double weight_decay = 0;
};

struct Parameters {
  std::vector<std::uint64_t> pilot_seeds;
  std::vector<std::uint64_t> confirmatory_seeds;
  Model model;
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::int64_t token_budget = 0;        // confirmatory runs
  std::int64_t pilot_token_budget = 0;  // pilot runs
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t eval_interval_tokens = 0;
  std::int64_t validation_tokens = 0;
  std::vector<double> learning_rates;
  std::vector<double> weight_decays;
  nlohmann::json muon;      // validated by the schema; consumed by the optimizer as is
  nlohmann::json adamw;     // likewise
  nlohmann::json schedule;  // likewise
  double max_step_time_overhead = 0;
  double confidence = 0;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;

  // The search grid, learning-rate major: ids 1..(rates x decays).
  std::vector<Configuration> configurations() const;
  // Approximate trainable parameters (tied embedding, attention, gated FFN).
  double approximate_parameters() const;
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts; throws std::invalid_argument naming fields.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::per_head_muon
