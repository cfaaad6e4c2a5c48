#include "situ_qat/run_unit.hpp"

#include <stdexcept>

#include "k3lab/experiments/training/downstream.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/distributed.hpp"
#include "situ_qat/activation_probe.hpp"
#include "situ_qat/arm_model.hpp"
#include "situ_qat/loss_spikes.hpp"

namespace k3lab::experiments::situ_qat {

std::optional<std::string> runner_problem(const Parameters& p) {
  try {
    quant_config(p.quantization);
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
  if (p.histogram_interval_tokens % p.eval_interval_tokens != 0) {
    return "situ-qat: activation_histograms.interval_tokens (" + std::to_string(p.histogram_interval_tokens) +
           ") must be a multiple of eval_interval_tokens (" + std::to_string(p.eval_interval_tokens) +
           "): activations are measured at evaluation points";
  }
  if (p.histogram_sample_tokens % p.sequence_length != 0) {
    return "situ-qat: activation_histograms.sample_tokens must be a multiple of sequence_length (whole windows)";
  }
  return std::nullopt;
}

train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  return training::arm_trainer_config(p, p, p, arm_model_config(p, arm), seed, options, checkpoint_dir);
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  if (auto problem = runner_problem(p)) throw std::invalid_argument(*problem);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  auto config = trainer_config(p, arm, seed, env.options, unit_checkpoint_dir(env.artifacts_dir, unit.id));
  config.distributed = train::as_distributed(env.distributed);
  nlohmann::json data = {{"arm", arm},
                         {"seed", seed},
                         {"parameters", models::count_parameters(config.model)},
                         {"ffn_kind", models::to_string(config.model.ffn.kind)},
                         {"trainer_config", config.to_json()},
                         {"histogram_interval_tokens", p.histogram_interval_tokens}};

  train::Dataset dataset;
  std::optional<training::DownstreamProbe> downstream;
  if (auto failure = training::load_unit_data(p, env.options, true, dataset, downstream, data)) return *failure;
  const ActivationProbe probe(p, dataset);

  auto hooks = training::unit_hooks(unit, env);
  hooks.evaluate = training::with_downstream(
      [&](train::EvalContext& context) {
        nlohmann::json probes = nlohmann::json::object();
        if (context.tokens % p.histogram_interval_tokens == 0) probes["activations"] = probe.measure(context.model, context.device);
        return probes;
      },
      downstream);

  auto result = train::train(config, dataset, hooks);
  data["training"] = result.to_json();
  data["downstream_task_quality"] = training::downstream_record(downstream, data["training"]["evaluations"]);
  data["loss_spikes"] = loss_spikes_json(result.state.losses, p.loss_spike_window_updates, p.loss_spike_threshold_sigma,
                                         p.batch_tokens);
  const nlohmann::json timing = {{"training", result.timing_json()}};
  return training_outcome(result, "situ-qat", unit, std::move(data), timing);
}

}  // namespace k3lab::experiments::situ_qat
