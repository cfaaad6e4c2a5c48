#include "router_balance/units.hpp"

#include <stdexcept>

#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/experiments/training/proxy_experiment.hpp"
#include "router_balance/page.hpp"
#include "router_balance/run_unit.hpp"

namespace k3lab::experiments::router_balance {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"no-control", "aux-loss", "fixed-step-bias", "quantile-balancing"};
  return ids;
}

nlohmann::json control_spec(const Parameters& p, const std::string& arm) {
  if (arm == "no-control") return {{"kind", "none"}};
  if (arm == "aux-loss") return {{"kind", "aux-loss"}, {"coefficient", p.aux_loss_coefficient}};
  if (arm == "fixed-step-bias") return {{"kind", "sign-bias"}, {"step", p.fixed_step}};
  if (arm == "quantile-balancing") {
    nlohmann::json spec = {{"kind", "quantile-bias"}, {"estimator", p.quantile_estimator}};
    if (p.quantile_estimator == "histogram") spec["histogram_bins"] = p.quantile_histogram_bins;
    return spec;
  }
  throw std::invalid_argument("router-balance: unknown arm \"" + arm + "\"");
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  return training::arm_by_seed_units(arm_ids(), p.seeds, [&p](const std::string& arm) {
    return nlohmann::json{{"control", control_spec(p, arm)},
                          {"warmup_updates", p.warmup_updates},
                          {"measured_updates", p.measured_updates}};
  });
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  const double tokens_per_run = static_cast<double>(p.total_updates()) * static_cast<double>(p.batch_tokens);
  nlohmann::json d;
  d["runs"] = training::runs_by_arm_and_seed(units);
  d["per_run"] = {{"warmup_updates", p.warmup_updates},
                  {"measured_updates", p.measured_updates},
                  {"tokens", tokens_per_run},
                  {"logged_points", p.measured_updates / p.log_interval_updates}};
  d["routing"] = {{"n_experts", p.model.n_experts},
                  {"top_k", p.model.top_k},
                  {"capacity_factor", p.capacity_factor},
                  {"expert_capacity_per_batch", p.expert_capacity()},
                  {"mean_expert_load_per_batch",
                   static_cast<double>(p.batch_tokens) * p.model.top_k / p.model.n_experts}};
  training::add_run_estimate(d,
                             {.parameters_key = "approximate_active_parameters",
                              .parameters = p.approximate_active_parameters(),
                              .tokens_per_run = tokens_per_run,
                              .not_counted = "routing, dispatch and attention scores are not counted, "
                                             "so this is a lower bound on time",
                              .counted = "6 x active parameters x tokens"},
                             units.size());
  const auto shape_of = [](const std::string&) {
    return train::BenchShape{std::nullopt,
                             "router-balance trains its MoE model (moe_model.hpp), which `k3lab bench "
                             "train` does not build"};
  };
  auto costs = training::arm_costs(arm_ids(), units, tokens_per_run, p.approximate_active_parameters(), shape_of);
  const models::MoeMemoryShape shape{.vocab_size = p.model.vocab_size, .hidden_size = p.model.d_model,
                                     .layers = p.model.n_layers, .heads = p.model.n_heads,
                                     .head_dim = p.model.head_dim, .experts = p.model.n_experts,
                                     .top_k = p.model.top_k, .expert_hidden = p.model.expert_hidden};
  // One forward per update (run_unit.cpp): the micro-batch is the whole batch, the same for every arm.
  for (auto& cost : costs) {
    cost.memory = models::moe_training_memory(shape, p.batch_tokens / p.sequence_length, p.sequence_length);
  }
  d["gpu_hours_by_arm"] = training::arm_costs_json(costs);
  // No evaluation pass: loads, drops and losses are logged from the training forward itself.
  d["evaluation_cost"] =
      training::evaluation_cost_json({.parameters = p.approximate_active_parameters(),
                                      .training_tokens = tokens_per_run * static_cast<double>(units.size()),
                                      .runs = units.size(),
                                      .parts = {}});
  return d;
}

std::unique_ptr<Experiment> make_experiment() {
  return training::make_proxy_experiment<Parameters>(
      {.parameters = &parameter_set(), .arms = arm_ids(), .units = enumerate_units,
       .plan = plan_details, .run = run_training_unit, .results = add_results,
       .records = {.caption = "Dropped tokens, NaNs and OOMs are outcomes of an arm; a run is excluded only for a "
                              "predeclared hardware or logging failure shared across arms."},
       .data_parallel = false, .runner_problem = runner_problem});
}

}  // namespace k3lab::experiments::router_balance
