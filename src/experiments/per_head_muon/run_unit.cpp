#include "per_head_muon/run_unit.hpp"

#include <stdexcept>

#include "k3lab/core/ledger.hpp"
#include "k3lab/experiments/training/dense_model.hpp"
#include "k3lab/experiments/training/downstream.hpp"
#include "k3lab/models/layer_schedule.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/distributed.hpp"
#include "per_head_muon/head_metrics.hpp"
#include "per_head_muon/muon_optimizer.hpp"
#include "per_head_muon/selection.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

// Mean wall time of the optimizer step over consecutive windows of `window` steps (this attempt only:
// a resumed run restarts the windows at its first step).
nlohmann::json step_time_json(const std::vector<double>& seconds, std::int64_t window) {
  nlohmann::json windows = nlohmann::json::array();
  double total = 0;
  for (double s : seconds) total += s;
  for (std::size_t start = 0; start + window <= seconds.size(); start += window) {
    double sum = 0;
    for (std::size_t i = start; i < start + window; ++i) sum += seconds[i];
    windows.push_back(sum / static_cast<double>(window));
  }
  return {{"window_steps", window},
          {"steps_timed", seconds.size()},
          {"window_means_s", windows},
          {"mean_s", seconds.empty() ? 0.0 : total / static_cast<double>(seconds.size())}};
}

}  // namespace

models::ModelConfig proxy_model_config(const Parameters& p) {
  auto c = training::dense_model_config(p.model);
  c.validate();
  return c;
}

train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, const Configuration& configuration,
                                    std::uint64_t seed, std::int64_t token_budget, const nlohmann::json& options,
                                    const std::filesystem::path& checkpoint_dir) {
  train::TrainerConfig c;
  c.model = proxy_model_config(p);
  c.init_seed = seed;  // the same initialization in every arm for a seed
  c.order_seed = p.data_order_seed;
  c.token_budget = token_budget;
  c.batch_tokens = p.batch_tokens;
  c.sequence_length = p.sequence_length;
  c.micro_batch_rows = p.trainer_micro_batch_rows();
  c.eval_interval_tokens = p.eval_interval_tokens;
  c.validation_tokens = p.validation_tokens;
  c.optimizer.name = optimizer_name(arm);
  c.optimizer.learning_rate = configuration.learning_rate;
  c.optimizer.weight_decay = configuration.weight_decay;
  c.optimizer.beta1 = p.adamw.at("beta1").get<double>();
  c.optimizer.beta2 = p.adamw.at("beta2").get<double>();
  c.optimizer.eps = p.adamw.at("epsilon").get<double>();
  c.optimizer.warmup_fraction = p.schedule.at("warmup_fraction").get<double>();
  c.optimizer.decay = p.schedule.at("decay").get<std::string>();
  if (arm != "adamw") {
    c.optimizer.extra = {{"momentum", p.muon.at("momentum")},
                         {"nesterov", p.muon.at("nesterov")},
                         {"newton_schulz_steps", p.muon.at("newton_schulz_steps")},
                         {"update_rms", p.muon.at("update_rms")},
                         {"per_head_projections", p.muon.at("per_head_projections")}};
  }
  c.optimizer.extra["heads"] = p.model.n_heads;
  c.optimizer_factory = arm_optimizer_factory(arm);
  c.checkpoint_dir = checkpoint_dir;
  apply_execution_options(c, options);
  return c;
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto phase = unit.spec.at("phase").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  const auto budget = unit.spec.at("token_budget").get<std::int64_t>();
  nlohmann::json data = {{"arm", arm}, {"phase", phase}, {"seed", seed}};

  Configuration configuration;
  if (phase == "confirmatory") {
    const RunRecords records{nlohmann::json::object(), core::read_ledger(env.run_dir), env.run_dir};
    const auto selection = select_configuration(p, arm, records.terminal_records());
    data["selection"] = selection.to_json();
    if (!selection.selected) {
      return UnitOutcome::invalid(kPilotsUnfinished,
                                  "per-head-muon: confirmatory runs start only after every pilot run has a terminal record; " +
                                      std::to_string(selection.missing.size()) + " pilot run(s) of arm " + arm +
                                      " have none (first: " + selection.missing.front() +
                                      "). Finish the pilot phase (run the same command again) before the confirmatory phase",
                                  data);
    }
    configuration = *selection.selected;
  } else {
    configuration = {unit.spec.at("config").get<int>(), unit.spec.at("learning_rate").get<double>(),
                     unit.spec.at("weight_decay").get<double>()};
  }
  data["configuration"] = {{"config", configuration.id},
                           {"learning_rate", configuration.learning_rate},
                           {"weight_decay", configuration.weight_decay}};

  auto config = trainer_config(p, arm, configuration, seed, budget, env.options, unit_checkpoint_dir(env.artifacts_dir, unit.id));
  config.distributed = train::as_distributed(env.distributed);
  data["parameters"] = models::count_parameters(config.model);
  data["trainer_config"] = config.to_json();

  // End-task quality belongs to the confirmatory runs (the protocol's evaluation cadence); pilots select
  // by validation loss alone.
  train::Dataset dataset;
  std::optional<training::DownstreamProbe> downstream;
  if (auto failure = training::load_unit_data(p, env.options, phase == "confirmatory", dataset, downstream, data)) {
    return *failure;
  }

  auto probe = std::make_shared<train::OptimizerProbe>();
  probe->interval_steps = p.eval_interval_tokens / p.batch_tokens;
  config.optimizer_factory = arm_optimizer_factory(arm, probe);

  auto hooks = training::unit_hooks(unit, env);
  hooks.evaluate = training::with_downstream(
      [&](train::EvalContext& context) {
        nlohmann::json probes = {{"head_diversity", head_diversity(context.model, p.model.n_heads)}};
        // The update that led to this checkpoint (the probe measures every interval_steps-th step).
        if (probe->last_update_norms.is_object() && probe->last_update_norms.value("step", -1) == context.step) {
          probes["update_norms"] = probe->last_update_norms;
          probes["update_norm_dispersion"] = update_dispersion(probe->last_update_norms);
        }
        return probes;
      },
      downstream);

  auto result = train::train(config, dataset, hooks);
  data["training"] = result.to_json();
  if (phase == "confirmatory") data["end_task_quality"] = training::downstream_record(downstream, data["training"]["evaluations"]);
  const nlohmann::json timing = {{"training", result.timing_json()},
                                 {"optimizer_step_time_s", step_time_json(probe->step_seconds, probe->interval_steps)}};
  return training_outcome(result, "per-head-muon", unit, std::move(data), timing);
}

}  // namespace k3lab::experiments::per_head_muon
