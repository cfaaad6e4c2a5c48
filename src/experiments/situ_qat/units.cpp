#include "situ_qat/units.hpp"

#include "k3lab/experiments/training/plan_estimate.hpp"
#include "k3lab/experiments/training/proxy_experiment.hpp"
#include "situ_qat/activation_probe.hpp"
#include "situ_qat/page.hpp"
#include "situ_qat/run_unit.hpp"

namespace k3lab::experiments::situ_qat {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"swiglu", "situ-glu"};
  return ids;
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  return training::arm_by_seed_units(arm_ids(), p.seeds, [&p](const std::string& arm) {
    nlohmann::json activation = {{"kind", arm}};
    if (arm == "situ-glu") activation.update({{"beta1", p.beta1}, {"beta2", p.beta2}});
    return nlohmann::json{{"activation", activation},
                          {"token_budget", p.token_budget},
                          {"histogram_checkpoints", p.token_budget / p.histogram_interval_tokens}};
  });
}

// The evaluation cadence over all runs: the trainer's validation loss at every evaluation and, at every
// histogram checkpoint, one forward over the fixed activation sample (activation_probe.hpp).
training::EvaluationCost evaluation_cost(const Parameters& p, std::size_t runs) {
  const double R = static_cast<double>(runs);
  const double checkpoints = static_cast<double>(p.token_budget / p.histogram_interval_tokens);
  training::EvaluationCost cost{
      .parameters = training::approximate_parameters(p.model),
      .training_tokens = R * static_cast<double>(p.token_budget),
      .runs = runs,
      .parts = {training::validation_loss_part(p, R * static_cast<double>(p.token_budget)),
                {"activation histograms",
                 {"activation_histograms.interval_tokens", "activation_histograms.sample_tokens"},
                 R * checkpoints * static_cast<double>(p.histogram_sample_tokens)}}};
  // The downstream suite at its scoring points (forward only).
  for (auto& part : training::downstream_parts(p, R, p.sequence_length)) cost.parts.push_back(std::move(part));
  return cost;
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  nlohmann::json d;
  d["runs"] = training::runs_by_arm_and_seed(units);
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"evaluations", p.token_budget / p.eval_interval_tokens},
                  {"histogram_checkpoints", p.token_budget / p.histogram_interval_tokens}};
  d["qat"] = {{"weights", p.quantization.weight_format},
              {"activations", p.quantization.activation_format},
              {"block_size", p.quantization.block_size},
              {"scale_rounding", p.quantization.scale_rounding},
              {"situ_betas", {p.beta1, p.beta2}},
              {"situ_output_bound", p.beta1 * p.beta2}};
  training::add_trainer_costs(
      d,
      {.parameters_key = "approximate_parameters",
       .parameters = training::approximate_parameters(p.model),
       .tokens_per_run = static_cast<double>(p.token_budget),
       .not_counted = "fake-quantization, histograms and evaluation are not counted, so this is a lower bound on time"},
      arm_ids(), units, [&p](const std::string& arm) { return trainer_config(p, arm, 0, nlohmann::json::object(), {}); },
      evaluation_cost(p, units.size()));
  return d;
}

std::unique_ptr<Experiment> make_experiment() {
  return training::make_proxy_experiment<Parameters>(
      {.parameters = &parameter_set(), .arms = arm_ids(), .units = enumerate_units,
       .plan = plan_details, .run = run_training_unit, .results = add_results,
       .records = {.caption = "Seeds are paired across the two arms; a numerical failure stays in the result unless a "
                              "predeclared logging defect caused it."},
       .records_intro = true, .runner_problem = runner_problem,
       // The fixed activation sample fits the validation text.
       .check_dataset = [](const Parameters& p, const train::Dataset& data) { ActivationProbe probe(p, data); }});
}

}  // namespace k3lab::experiments::situ_qat
