#include "attn_res/units.hpp"

#include "attn_res/depth_probe.hpp"
#include "attn_res/page.hpp"
#include "attn_res/run_unit.hpp"
#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/experiments/training/proxy_experiment.hpp"

namespace k3lab::experiments::attn_res {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"ordinary-residual", "full-attnres", "block-attnres"};
  return ids;
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  return training::arm_by_seed_units(arm_ids(), p.seeds, [&p](const std::string& arm) {
    nlohmann::json spec = {{"n_layers", p.model.n_layers},
                           {"token_budget", p.token_budget},
                           {"checkpoints", p.token_budget / p.eval_interval_tokens}};
    if (arm == "block-attnres") spec["block_layers"] = p.attnres_block_layers;
    return spec;
  });
}

// The evaluation cadence over all runs: at every evaluation the trainer's validation loss and the depth
// probe (depth_probe.hpp: one forward and backward over a micro-batch of validation rows).
training::EvaluationCost evaluation_cost(const Parameters& p, std::size_t runs, std::int64_t micro_batch_rows) {
  const double R = static_cast<double>(runs);
  const double evaluations = static_cast<double>(p.token_budget / p.eval_interval_tokens);
  const double probe_tokens = static_cast<double>(probe_rows(p, micro_batch_rows) * p.sequence_length);
  training::EvaluationCost cost{.parameters = training::approximate_parameters(p.model),
                                .training_tokens = R * static_cast<double>(p.token_budget),
                                .runs = runs,
                                .parts = {training::validation_loss_part(p, R * static_cast<double>(p.token_budget)),
                                          {"depth probe (gradient norms by depth, forward and backward)",
                                           {"eval_interval_tokens", "sequence_length", "batch_tokens"},
                                           R * evaluations * probe_tokens,
                                           6.0}}};
  // The downstream suite at its scoring points (forward only).
  for (auto& part : training::downstream_parts(p, R, p.sequence_length)) cost.parts.push_back(std::move(part));
  return cost;
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  const int complete_blocks = p.model.n_layers / p.attnres_block_layers;
  const int partial_layers = p.model.n_layers % p.attnres_block_layers;
  const int blocks = complete_blocks + (partial_layers > 0 ? 1 : 0);
  nlohmann::json d;
  d["runs"] = training::runs_by_arm_and_seed(units);
  d["depth"] = {{"decoder_layers", p.model.n_layers},
                {"block_layers", p.attnres_block_layers},
                {"complete_blocks", complete_blocks},
                {"partial_block_layers", partial_layers},
                // Sources one aggregation can attend to (AttnRes counts attention and MLP as separate layers):
                // Full: the embedding and every sublayer output; Block: the embedding and every block.
                {"most_depth_sources_full_attnres", 2 * p.model.n_layers + 1},
                {"most_depth_sources_block_attnres", blocks + 1}};
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"checkpoints", p.token_budget / p.eval_interval_tokens}};
  d["decision"] = {{"primary", "paired per-seed validation loss at the token budget"},
                   {"min_relative_improvement", p.decision.min_relative_improvement},
                   {"confidence", p.decision.confidence},
                   {"bootstrap_resamples", p.decision.bootstrap_resamples},
                   {"max_memory_regression", p.decision.max_memory_regression},
                   {"max_throughput_regression", p.decision.max_throughput_regression}};
  const auto config_of = [&p](const std::string& arm) {
    return trainer_config(p, arm, 0, nlohmann::json::object(), {});
  };
  training::add_trainer_costs(
      d,
      {.parameters_key = "approximate_parameters",
       .parameters = training::approximate_parameters(p.model),
       .tokens_per_run = static_cast<double>(p.token_budget),
       .not_counted = "attention scores, AttnRes aggregation and evaluation are not counted, so this is a lower "
                      "bound on time",
       .counted = "6 x parameters x tokens for the ordinary-residual shape (tied embedding)"},
      arm_ids(), units, config_of,
      evaluation_cost(p, units.size(), config_of(arm_ids().front()).resolved_micro_batch_rows()));
  return d;
}

std::unique_ptr<Experiment> make_experiment() {
  return training::make_proxy_experiment<Parameters>(
      {.parameters = &parameter_set(), .arms = arm_ids(), .units = enumerate_units,
       .plan = plan_details, .run = run_training_unit, .results = add_results,
       .records = {.caption = "Seeds are paired across the three arms; a crash or OOM is a recorded arm failure, never "
                              "a silently shrunk batch."}});
}

}  // namespace k3lab::experiments::attn_res
