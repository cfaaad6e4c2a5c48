#pragma once
// The parameters block of experiments/attn-res.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::attn_res {

struct Model {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;  // decoder layers (attention + MLP each), K3's unit for AttnRes block size
  int n_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden = 0;
};

struct Decision {
  double min_relative_improvement = 0;  // of mean paired validation loss vs ordinary residuals
  double confidence = 0;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;
  double max_memory_regression = 0;      // relative, peak stored residual memory
  double max_throughput_regression = 0;  // relative, training tokens per second
};

struct Parameters {
  std::vector<std::uint64_t> seeds;
  Model model;
  int attnres_block_layers = 0;
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::int64_t token_budget = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t eval_interval_tokens = 0;
  std::int64_t validation_tokens = 0;
  nlohmann::json optimizer;  // validated by the schema; consumed by the trainer as is
  Decision decision;

  // Approximate trainable parameters of the ordinary-residual model (tied embedding, no norms).
  double approximate_parameters() const;
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts; throws std::invalid_argument naming fields.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::attn_res
