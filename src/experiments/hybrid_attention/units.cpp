#include "hybrid_attention/units.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hybrid_attention/page.hpp"
#include "hybrid_attention/probes.hpp"
#include "hybrid_attention/run_unit.hpp"
#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/experiments/training/proxy_experiment.hpp"

namespace k3lab::experiments::hybrid_attention {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"full-attention", "all-kda", "hybrid-3kda-1mla"};
  return ids;
}

std::vector<std::string> layer_schedule(const std::string& arm, int n_layers) {
  std::vector<std::string> mixers;
  for (int layer = 0; layer < n_layers; ++layer) {
    if (arm == "full-attention") mixers.push_back("mla");
    else if (arm == "all-kda") mixers.push_back("kda");
    else if (arm == "hybrid-3kda-1mla") mixers.push_back(layer % 4 == 3 ? "mla" : "kda");
    else throw std::invalid_argument("hybrid-attention: unknown arm \"" + arm + "\"");
  }
  return mixers;
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  return training::arm_by_seed_units(arm_ids(), p.seeds, [&p](const std::string& arm) {
    return nlohmann::json{{"layer_schedule", layer_schedule(arm, p.model.n_layers)},
                          {"token_budget", p.token_budget},
                          {"evaluations", p.token_budget / p.eval_interval_tokens},
                          {"safety_timeout_hours", p.safety_timeout_hours}};
  });
}

// The evaluation cadence over all runs (probes.hpp): at every evaluation the trainer's validation loss,
// MQAR and needle retrieval at every probe length, and the loss-by-position pass over the longest
// length; once per run the inference probe at every length and the decode drift (chunkwise, then
// token by token).
training::EvaluationCost evaluation_cost(const Parameters& p, std::size_t runs) {
  const double R = static_cast<double>(runs);
  const double evaluations = static_cast<double>(p.token_budget / p.eval_interval_tokens);
  // Examples per length scored over one run: the checkpoint subset at the evaluations before the
  // last, every example at the last.
  const double subset = static_cast<double>(p.long_context_checkpoint_examples.value_or(p.long_context_examples));
  const double examples =
      evaluations < 1 ? 0.0 : (evaluations - 1) * subset + static_cast<double>(p.long_context_examples);
  double all_lengths = 0, longest = 0, inference = 0;
  for (const auto length : p.long_context_lengths) {
    all_lengths += static_cast<double>(length);
    longest = std::max(longest, static_cast<double>(length));
    inference += static_cast<double>(length + kProbeDecodeTokens);
  }
  const double drift = 2.0 * std::min(longest, 2.0 * static_cast<double>(p.sequence_length));
  const std::vector<std::string> probe_fields = {"eval_interval_tokens", "long_context_eval.lengths",
                                                 "long_context_eval.examples_per_length",
                                                 "long_context_eval.checkpoint_examples"};
  training::EvaluationCost cost{
      .parameters = static_cast<double>(p.target_parameters),
      .training_tokens = R * static_cast<double>(p.token_budget),
      .runs = runs,
      .parts = {training::validation_loss_part(p, R * static_cast<double>(p.token_budget)),
                {"MQAR and needle retrieval probes", probe_fields, R * 2.0 * examples * all_lengths},
                {"loss by position on the longest probe length", probe_fields, R * examples * longest},
                {"final inference and drift probes",
                 {"long_context_eval.lengths", "sequence_length"},
                 R * (inference + drift)}}};
  // The downstream suite at its scoring points (forward only).
  for (auto& part : training::downstream_parts(p, R, p.sequence_length)) cost.parts.push_back(std::move(part));
  return cost;
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  const double target = static_cast<double>(p.target_parameters);
  nlohmann::json d;
  d["runs"] = training::runs_by_arm_and_seed(units);
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"evaluations", p.token_budget / p.eval_interval_tokens},
                  {"eval_interval_tokens", p.eval_interval_tokens},
                  {"safety_timeout_hours", p.safety_timeout_hours}};
  d["parameters"] = {{"target", p.target_parameters},
                     {"tolerance", p.parameter_tolerance},
                     {"allowed_range",
                      {std::llround(target * (1 - p.parameter_tolerance)), std::llround(target * (1 + p.parameter_tolerance))}}};
  training::add_trainer_costs(
      d,
      {.parameters = target,
       .tokens_per_run = static_cast<double>(p.token_budget),
       .not_counted = "attention-score, evaluation and probe FLOPs are not counted, so this is a lower bound on "
                      "time, not a budget"},
      arm_ids(), units, [&p](const std::string& arm) { return trainer_config(p, arm, 0, nlohmann::json::object(), {}); },
      evaluation_cost(p, units.size()));
  return d;
}

std::unique_ptr<Experiment> make_experiment() {
  return training::make_proxy_experiment<Parameters>(
      {.parameters = &parameter_set(), .arms = arm_ids(), .units = enumerate_units,
       .plan = plan_details, .run = run_training_unit, .results = add_results,
       .records = {.caption = "Complete every valid run before reading aggregate results; a run past the safety "
                              "timeout is incomplete, never a comparison."},
       .records_intro = true});
}

}  // namespace k3lab::experiments::hybrid_attention
