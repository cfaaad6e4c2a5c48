#include "k3lab/experiments/training_unit.hpp"

#include <stdexcept>

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
  if (options.contains("micro_batch_rows")) config.micro_batch_rows = options.at("micro_batch_rows").get<std::int64_t>();
}

std::optional<WindowVerdict> data_unavailable_stop(const std::vector<nlohmann::json>& terminal_records) {
  for (const auto& r : terminal_records) {
    if (r.value("kind", "") == "failure" && r.value("reason", "") == kDataUnavailable) {
      return WindowVerdict{true,
                           "the dataset could not be loaded (" + r.value("detail", std::string()) +
                               "); provide it and start a new run with --fresh",
                           nlohmann::json::object()};
    }
  }
  return std::nullopt;
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

}  // namespace k3lab::experiments
