#include "hybrid_attention/run_unit.hpp"

#include <stdexcept>

#include "hybrid_attention/arm_model.hpp"
#include "hybrid_attention/probes.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::experiments::hybrid_attention {

train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  train::TrainerConfig c;
  c.model = arm_model_config(p, arm);
  c.init_seed = seed;  // the same seed in every arm: parameters the arms share start equal (models/init.hpp)
  c.order_seed = p.data_order_seed;
  c.token_budget = p.token_budget;
  c.batch_tokens = p.batch_tokens;
  c.sequence_length = p.sequence_length;
  c.eval_interval_tokens = p.eval_interval_tokens;
  c.validation_tokens = p.validation_tokens;
  c.optimizer = train::OptimizerSpec::from_json(p.optimizer);
  c.safety_timeout_seconds = p.safety_timeout_hours * 3600.0;
  c.checkpoint_dir = checkpoint_dir;
  apply_execution_options(c, options);
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
  config.distributed = env.distributed;
  const auto count = models::count_parameters(config.model);
  data["parameters"] = count;
  data["parameter_error"] = static_cast<double>(count - p.target_parameters) / static_cast<double>(p.target_parameters);
  data["schedule"] = config.model.schedule;
  data["ffn_intermediate_size"] = config.model.ffn.intermediate_size;
  data["trainer_config"] = config.to_json();

  train::Dataset dataset;
  try {
    dataset = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(env.options)});
  } catch (const std::exception& e) {
    return UnitOutcome::failure(kDataUnavailable, e.what(), data);
  }
  data["dataset"] = dataset.provenance;
  const LongContextProbes probes(p, dataset);

  train::TrainerHooks hooks;
  hooks.evaluate = [&](train::EvalContext& context) { return probes.evaluate(context.model, context.device); };
  hooks.on_evaluation = [&](const nlohmann::json& record) {
    if (env.note) env.note(unit.id, {{"kind", "note"}, {"note", "evaluation"}, {"evaluation", record}});
  };
  hooks.progress = [&](double fraction) {
    if (env.progress) env.progress(fraction);
  };
  hooks.stop_requested = env.stop_requested;

  auto result = train::train(config, dataset, hooks);
  data["training"] = result.to_json();
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
  const torch::Device device = env.distributed ? env.distributed->device() : train::resolve_device(config.device);
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
