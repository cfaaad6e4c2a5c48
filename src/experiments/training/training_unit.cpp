#include "k3lab/experiments/training/training_unit.hpp"

#include <stdexcept>

#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::experiments {

std::optional<std::string> dataset_problem(const train::DatasetRequest& request) {
  try {
    train::load_dataset(request);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::filesystem::path unit_checkpoint_dir(const std::filesystem::path& artifacts_dir, const std::string& unit_id) {
  if (artifacts_dir.empty()) return {};
  std::string name = unit_id;
  for (auto& ch : name) {
    if (ch == '/') ch = '_';
  }
  return artifacts_dir / "checkpoints" / name;
}

void apply_execution_options(train::TrainerConfig& config, const nlohmann::json& options) {
  config.device = options.value("device", std::string("auto"));
  config.threads = options.value("threads", 0);
}

std::optional<WindowVerdict> data_unavailable_stop(const nlohmann::json& terminal_record) {
  const auto& r = terminal_record;
  if (r.value("kind", "") != "failure" || r.value("reason", "") != kDataUnavailable) return std::nullopt;
  return WindowVerdict{true,
                       "the dataset could not be loaded (" + r.value("detail", std::string()) +
                           "); provide it and start a new run with --fresh",
                       nlohmann::json::object()};
}

UnitOutcome training_outcome(const train::TrainResult& result, std::string_view experiment_id, const Unit& unit,
                             nlohmann::json data, nlohmann::json timing) {
  switch (result.status) {
    case train::TrainResult::Status::Completed:
      return UnitOutcome::result(std::move(data), std::move(timing));
    case train::TrainResult::Status::Failed:
      if (result.failure_class == "rank-failure") throw train::RankFailure(result.detail);
      return UnitOutcome::failure(result.failure_class, result.detail, std::move(data));
    case train::TrainResult::Status::TimedOut:
      return UnitOutcome::invalid("safety-timeout", result.detail, std::move(data));
    case train::TrainResult::Status::Interrupted:
      break;
  }
  throw std::runtime_error(std::string(experiment_id) + ": " + unit.id + " interrupted: " + result.detail);
}

namespace training {

train::DatasetRequest dataset_request(const DataSource& data, std::int64_t vocab_size, const nlohmann::json& options) {
  return {data.dataset, data.tokenizer, vocab_size, train::data_root_from(options), true, data.manifest_sha256};
}

train::TrainerConfig shared_trainer_config(const DataSource& data, const TokenSchedule& schedule, std::uint64_t seed,
                                           const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  train::TrainerConfig c;
  c.init_seed = seed;
  c.order_seed = data.data_order_seed;
  c.token_budget = schedule.token_budget;
  c.batch_tokens = schedule.batch_tokens;
  c.sequence_length = schedule.sequence_length;
  c.micro_batch_rows = schedule.trainer_micro_batch_rows();
  c.eval_interval_tokens = schedule.eval_interval_tokens;
  c.validation_tokens = schedule.validation_tokens;
  c.checkpoint_dir = checkpoint_dir;
  apply_execution_options(c, options);
  return c;
}

train::TrainerConfig arm_trainer_config(const DataSource& data, const TokenSchedule& schedule,
                                        const OptimizerBlock& optimizer, models::ModelConfig model, std::uint64_t seed,
                                        const nlohmann::json& options, const std::filesystem::path& checkpoint_dir) {
  auto c = shared_trainer_config(data, schedule, seed, options, checkpoint_dir);
  c.model = std::move(model);
  c.optimizer = train::OptimizerSpec::from_json(optimizer.optimizer);
  return c;
}

std::optional<UnitOutcome> load_unit_dataset(const train::DatasetRequest& request, train::Dataset& dataset,
                                             nlohmann::json& data) {
  try {
    dataset = train::load_dataset(request);
  } catch (const std::exception& e) {
    return UnitOutcome::failure(kDataUnavailable, e.what(), data);
  }
  data["dataset"] = dataset.provenance;
  return std::nullopt;
}

train::TrainerHooks unit_hooks(const Unit& unit, RunEnv& env) {
  train::TrainerHooks hooks;
  hooks.on_evaluation = [unit_id = unit.id, &env](const nlohmann::json& record) {
    if (env.note) env.note(unit_id, {{"kind", "note"}, {"note", "evaluation"}, {"evaluation", record}});
  };
  hooks.on_checkpoint_note = [unit_id = unit.id, &env](const nlohmann::json& skipped) {
    if (env.note) env.note(unit_id, {{"kind", "note"}, {"note", "checkpoint-skipped"}, {"checkpoint", skipped}});
  };
  hooks.progress = [&env](double fraction) {
    if (env.progress) env.progress(fraction);
  };
  hooks.stop_requested = env.stop_requested;
  return hooks;
}

torch::Device unit_device(const RunEnv& env, const train::TrainerConfig& config) {
  return env.distributed ? train::as_distributed(env.distributed)->device() : train::resolve_device(config.device);
}

}  // namespace training
}  // namespace k3lab::experiments
