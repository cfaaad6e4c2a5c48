#include "router_balance/run_unit.hpp"

#include <algorithm>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/train/thread_pools.hpp"
#include "k3lab/train/device.hpp"
#include "router_balance/moe_model.hpp"
#include "router_balance/router_control.hpp"

namespace k3lab::experiments::router_balance {
namespace {

std::filesystem::path routing_artifact(const std::filesystem::path& artifacts_dir, const std::string& unit_id) {
  if (artifacts_dir.empty()) return {};
  std::string name = unit_id;
  for (auto& ch : name) {
    if (ch == '/') ch = '_';
  }
  return artifacts_dir / "routing" / (name + ".jsonl");
}

// The ledger's "logged" records: each logged update's measurements with its update and primary loss.
nlohmann::json logged_records(const train::TrainerState& state) {
  nlohmann::json logged = nlohmann::json::array();
  for (const auto& entry : state.step_extras) {
    auto record = entry.at("extras");
    const auto update = entry.at("step").get<std::int64_t>();
    record["update"] = update;
    record["primary_loss"] = state.losses.at(static_cast<std::size_t>(update));
    logged.push_back(std::move(record));
  }
  return logged;
}

nlohmann::json oscillation_json(const MoeProxyTask& task, models::RouterControl control) {
  if (!models::uses_bias(control)) return nullptr;  // no correction bias in this arm
  const auto& o = task.oscillation();
  return {{"mean_abs_change", o.mean_abs_change()},
          {"sign_flip_fraction", o.sign_flip_fraction()},
          {"changes", o.changes()},
          {"change_pairs", o.change_pairs()}};
}

}  // namespace

std::optional<std::string> runner_problem(const Parameters& p) {
  if (p.model.router_activation != "sigmoid") {
    return "router-balance: parameters.model.router_activation \"" + p.model.router_activation +
           "\" is not implemented; the runner implements \"sigmoid\" (K3's router)";
  }
  if (p.quantile_estimator != "exact") {
    return "router-balance: parameters.quantile_balancing.estimator \"" + p.quantile_estimator +
           "\" is not implemented; the runner implements \"exact\" (the histogram estimator is future work)";
  }
  if (p.batch_tokens % p.sequence_length != 0) {
    return "router-balance: batch_tokens must be a multiple of sequence_length (whole windows per update)";
  }
  if (p.final_loss_window_updates > p.measured_updates) {
    return "router-balance: final_loss_window_updates must not exceed measured_updates";
  }
  if (p.model.top_k >= p.model.n_experts) return "router-balance: model.top_k must be below model.n_experts";
  return std::nullopt;
}

std::int64_t checkpoint_interval_updates(std::int64_t total_updates) {
  std::int64_t interval = std::max<std::int64_t>(1, total_updates / 50);
  while (total_updates % interval != 0) --interval;
  return interval;
}

train::LoopConfig loop_config(const Parameters& p, const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  const auto total = p.total_updates();
  train::LoopConfig c;
  c.order_seed = p.data_order_seed;
  c.token_budget = total * p.batch_tokens;
  c.batch_tokens = p.batch_tokens;
  c.sequence_length = p.sequence_length;
  c.eval_interval_tokens = checkpoint_interval_updates(total) * p.batch_tokens;
  c.micro_batch_rows = p.batch_tokens / p.sequence_length;  // one forward per update: capacity is per batch
  c.optimizer = train::OptimizerSpec::from_json(p.optimizer);
  c.optimizer.warmup_fraction = static_cast<double>(p.warmup_updates) / static_cast<double>(total);
  c.checkpoint_dir = checkpoint_dir;
  c.device = options.value("device", std::string("auto"));
  c.threads = options.value("threads", 0);
  return c;
}

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env) {
  const auto p = parse_parameters(env.parameters);
  if (auto problem = runner_problem(p)) throw std::invalid_argument(*problem);
  const auto arm = unit.spec.at("arm").get<std::string>();
  const auto seed = unit.spec.at("seed").get<std::uint64_t>();
  const auto control = control_of_arm(arm);
  const auto total = p.total_updates();
  // "loop" keeps the text of the records written before router-balance moved onto the shared trainer,
  // so records stay comparable; its point, one forward per update, still holds.
  nlohmann::json data = {{"arm", arm},
                         {"seed", seed},
                         {"expert_capacity", p.expert_capacity()},
                         {"updates", total},
                         {"loop", "dedicated router-balance loop (run_unit.hpp), one forward per update"}};

  train::Dataset dataset;
  if (auto failure = training::load_unit_dataset(training::dataset_request(p, p.model.vocab_size, env.options), dataset, data)) {
    return *failure;
  }

  const auto config = loop_config(p, env.options, unit_checkpoint_dir(env.artifacts_dir, unit.id));
  // Before the model is built, as it trains.
  train::apply_thread_policy(core::choose_thread_policy(config.threads));
  data["device"] = train::resolve_device(config.device).str();
  MoeProxyTask task(p, control, seed, routing_artifact(env.artifacts_dir, unit.id));  // same seed in every arm
  const auto result = train::train_task(task, config, dataset, training::unit_hooks(unit, env));

  const double seconds = result.state.elapsed_seconds;
  const nlohmann::json timing = {{"training_seconds", seconds},
                                 {"tokens_per_second", static_cast<double>(result.state.tokens) / seconds},
                                 {"training", result.timing_json()}};
  // Steps and tokens trained, where every proxy experiment records them (its losses are primary_losses).
  data["training"] = {{"steps", result.state.step}, {"tokens", result.state.tokens}};
  data["primary_losses"] = result.state.losses;
  if (result.status == train::TrainResult::Status::Failed) {
    data["failed_at_update"] = static_cast<std::int64_t>(result.state.losses.size());
  }
  if (result.status != train::TrainResult::Status::Completed) {
    return training_outcome(result, "router-balance", unit, std::move(data), timing);
  }
  data["logged"] = logged_records(result.state);
  if (!task.routing_log().empty()) data["routing_artifact"] = std::filesystem::relative(task.routing_log(), env.run_dir).string();
  auto metrics = run_routing_metrics(data["logged"]);
  metrics["primary_training_loss"] = final_loss(result.state.losses, p.final_loss_window_updates);
  metrics["correction_bias_oscillation"] = oscillation_json(task, control);
  data["metrics"] = metrics;
  return UnitOutcome::result(data, timing);
}

}  // namespace k3lab::experiments::router_balance
