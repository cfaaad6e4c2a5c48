#pragma once
// The parameters block of experiments/router-balance.json: the parts every proxy experiment shares
// (training/parameters.hpp) and this module's own fields.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/training/parameters.hpp"

namespace k3lab::experiments::router_balance {

// n_layers: every layer is attention + MoE.
struct Model : training::ModelShape {
  int n_experts = 0;
  int top_k = 0;
  std::int64_t expert_hidden = 0;
  std::string router_activation;
};

// Bootstrap: under "decision".
struct Parameters : training::Seeds,
                    training::DataSource,
                    training::Batching,
                    training::OptimizerBlock,
                    training::Bootstrap {
  Model model;
  double capacity_factor = 0;
  std::int64_t warmup_updates = 0;
  std::int64_t measured_updates = 0;
  std::int64_t log_interval_updates = 0;
  std::int64_t final_loss_window_updates = 0;
  double aux_loss_coefficient = 0;
  double fixed_step = 0;
  std::string quantile_estimator;
  int quantile_histogram_bins = 0;
  double max_relative_loss_increase = 0;

  std::int64_t total_updates() const { return warmup_updates + measured_updates; }
  // Token slots one expert can take per batch: ceil(batch_tokens x top_k / n_experts x capacity_factor).
  std::int64_t expert_capacity() const;
  // Approximate parameters touched per token (tied embedding, attention, top_k experts, router).
  double approximate_active_parameters() const;
};

// The schema, the rules across fields and the typed parse (std::invalid_argument naming every bad field).
const training::ParameterSet<Parameters>& parameter_set();
inline const core::Schema& parameter_schema() { return parameter_set().schema(); }
inline Parameters parse_parameters(const nlohmann::json& parameters) { return parameter_set().parse(parameters); }

}  // namespace k3lab::experiments::router_balance
