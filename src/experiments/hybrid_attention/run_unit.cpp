#include "hybrid_attention/run_unit.hpp"

#include <stdexcept>

#include "hybrid_attention/arm_model.hpp"
#include "hybrid_attention/probes.hpp"
#include "k3lab/experiments/training/downstream.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::experiments::hybrid_attention {

train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  auto c = training::arm_trainer_config(p, p, p, arm_model_config(p, arm), seed, options, checkpoint_dir);
  c.safety_timeout_seconds = p.safety_timeout_hours * 3600.0;
  return c;
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  nlohmann::json data = {{"arm", arm}, {"seed", seed}, {"parameter_target", p.target_parameters},
                         {"parameter_tolerance", p.parameter_tolerance}};

  train::TrainerConfig config;
  try {
    config = trainer_config(p, arm, seed, env.options, unit_checkpoint_dir(env.artifacts_dir, unit.id));
  } catch (const std::invalid_argument& e) {
    // The seed's invalid-run rule: a model outside the parameter tolerance is invalid before training.
    return UnitOutcome::invalid("parameter-count", e.what(), data);
  }
  config.distributed = train::as_distributed(env.distributed);
  const auto count = models::count_parameters(config.model);
  data["parameters"] = count;
  data["parameter_error"] = static_cast<double>(count - p.target_parameters) / static_cast<double>(p.target_parameters);
  data["schedule"] = config.model.schedule;
  data["ffn_intermediate_size"] = config.model.ffn.intermediate_size;
  data["trainer_config"] = config.to_json();

  train::Dataset dataset;
  std::optional<training::DownstreamProbe> downstream;
  if (auto failure = training::load_unit_data(p, env.options, true, dataset, downstream, data)) return *failure;
  const LongContextProbes probes(p, dataset);

  auto hooks = training::unit_hooks(unit, env);
  hooks.evaluate = training::with_downstream(
      [&](train::EvalContext& context) { return probes.evaluate(context.model, context.device, context.final); },
      downstream);

  auto result = train::train(config, dataset, hooks);
  data["training"] = result.to_json();
  data["downstream_task_quality"] = training::downstream_record(downstream, data["training"]["evaluations"]);
  nlohmann::json timing = {{"training", result.timing_json()}};
  if (result.parameters != count) {
    throw std::logic_error("hybrid-attention: the built model has " + std::to_string(result.parameters) +
                           " parameters but the closed-form count says " + std::to_string(count));
  }
  if (result.status != train::TrainResult::Status::Completed) {
    return training_outcome(result, "hybrid-attention", unit, std::move(data), timing);
  }

  // Data parallel: rank 0 alone measures the trained model (alone on its device) and is recorded.
  if (env.distributed && !env.distributed->is_root()) return UnitOutcome::result(data, timing);
  const torch::Device device = training::unit_device(env, config);
  result.model->eval();
  auto final_probes = probes.final_probes(result.model, device);
  data["final"] = final_probes.data;
  data["probe_chunk"] = probes.chunk();
  data["haystack_tiled"] = probes.haystack_tiled();
  data["peak_memory_source"] = train::peak_memory_source(device);
  timing["final"] = final_probes.timing;
  return UnitOutcome::result(data, timing);
}

}  // namespace k3lab::experiments::hybrid_attention
