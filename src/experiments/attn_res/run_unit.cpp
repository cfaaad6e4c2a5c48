#include "attn_res/run_unit.hpp"

#include <stdexcept>

#include "attn_res/arm_model.hpp"
#include "attn_res/depth_probe.hpp"
#include "attn_res/residual_memory.hpp"
#include "k3lab/experiments/training/downstream.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::experiments::attn_res {

train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  return training::arm_trainer_config(p, p, p, arm_model_config(p, arm), seed, options, checkpoint_dir);
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  auto config = trainer_config(p, arm, seed, env.options, unit_checkpoint_dir(env.artifacts_dir, unit.id));
  config.distributed = train::as_distributed(env.distributed);
  const auto breakdown = models::parameter_breakdown(config.model);
  // The trainer keeps parameters and activations in float32 (models are built in the default dtype).
  const auto memory = stored_residual_memory(config.model, static_cast<std::int64_t>(sizeof(float)),
                                             config.resolved_micro_batch_rows() * config.sequence_length);
  nlohmann::json data = {{"arm", arm},
                         {"seed", seed},
                         {"residual_mode", models::to_string(config.model.residual.mode)},
                         {"parameters", breakdown.total()},
                         {"attnres_parameters", breakdown.residual},
                         {"stored_residual_memory", memory.to_json()},
                         {"trainer_config", config.to_json()}};

  train::Dataset dataset;
  std::optional<training::DownstreamProbe> downstream;
  if (auto failure = training::load_unit_data(p, env.options, true, dataset, downstream, data)) return *failure;
  const DepthProbe probe(p, dataset, config.resolved_micro_batch_rows());

  auto hooks = training::unit_hooks(unit, env);
  hooks.evaluate = training::with_downstream(
      [&](train::EvalContext& context) { return probe.evaluate(context.model, context.device); },
      downstream);

  auto result = train::train(config, dataset, hooks);
  data["training"] = result.to_json();
  data["downstream_task_quality"] = training::downstream_record(downstream, data["training"]["evaluations"]);
  if (result.parameters != breakdown.total()) {
    throw std::logic_error("attn-res: the built model has " + std::to_string(result.parameters) +
                           " parameters but the closed-form count says " + std::to_string(breakdown.total()));
  }
  const torch::Device device = training::unit_device(env, config);
  data["peak_memory_source"] = train::peak_memory_source(device);
  const nlohmann::json timing = {{"training", result.timing_json()}};
  return training_outcome(result, "attn-res", unit, std::move(data), timing);
}

}  // namespace k3lab::experiments::attn_res
