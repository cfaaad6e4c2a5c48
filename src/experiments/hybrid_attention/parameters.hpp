#pragma once
// The parameters block of experiments/hybrid-attention.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::hybrid_attention {

struct Model {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;   // a multiple of 4: the hybrid is n_layers/4 groups of 3 KDA + 1 MLA
  int n_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t mla_kv_latent_dim = 0;
  std::int64_t kda_chunk_size = 0;
  std::int64_t ffn_multiple = 0;  // each arm's FFN width is solved to the parameter target in these steps
};

struct Parameters {
  std::vector<std::uint64_t> seeds;
  std::int64_t target_parameters = 0;
  double parameter_tolerance = 0;
  Model model;
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::int64_t token_budget = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t eval_interval_tokens = 0;
  std::int64_t validation_tokens = 0;
  std::vector<std::int64_t> long_context_lengths;
  int long_context_examples = 0;
  double safety_timeout_hours = 0;
  nlohmann::json optimizer;  // validated by the schema; consumed by the trainer as is
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules such as exact token-budget divisibility) and converts;
// throws std::invalid_argument naming every bad field.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::hybrid_attention
