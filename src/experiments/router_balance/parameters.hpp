#pragma once
// The parameters block of experiments/router-balance.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::router_balance {

struct Model {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;  // every layer is attention + MoE
  int n_heads = 0;
  std::int64_t head_dim = 0;
  int n_experts = 0;
  int top_k = 0;
  std::int64_t expert_hidden = 0;
  std::string router_activation;
};

struct Parameters {
  std::vector<std::uint64_t> seeds;
  Model model;
  double capacity_factor = 0;
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::int64_t warmup_updates = 0;
  std::int64_t measured_updates = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t log_interval_updates = 0;
  std::int64_t final_loss_window_updates = 0;
  nlohmann::json optimizer;  // validated by the schema; consumed by the trainer as is
  double aux_loss_coefficient = 0;
  double fixed_step = 0;
  std::string quantile_estimator;
  int quantile_histogram_bins = 0;
  double max_relative_loss_increase = 0;
  double confidence = 0;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;

  std::int64_t total_updates() const { return warmup_updates + measured_updates; }
  // Token slots one expert can take per batch: ceil(batch_tokens x top_k / n_experts x capacity_factor).
  std::int64_t expert_capacity() const;
  // Approximate parameters touched per token (tied embedding, attention, top_k experts, router).
  double approximate_active_parameters() const;
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts; throws std::invalid_argument naming fields.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::router_balance
