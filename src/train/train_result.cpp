#include "k3lab/train/task_trainer.hpp"

namespace k3lab::train {

std::string TrainResult::to_string(Status status) {
  switch (status) {
    case Status::Completed: return "completed";
    case Status::Failed: return "failed";
    case Status::TimedOut: return "timed-out";
    case Status::Interrupted: return "interrupted";
  }
  return "failed";
}

nlohmann::json TrainResult::to_json() const {
  nlohmann::json j = {{"status", to_string(status)},
                      {"steps", state.step},
                      {"tokens", state.tokens},
                      {"parameters", parameters},
                      {"losses", state.losses},
                      {"evaluations", state.evaluations},
                      {"loss_spikes", state.loss_spikes},
                      {"config_sha256", state.config_sha256}};
  if (!failure_class.empty()) j["failure_class"] = failure_class;
  if (!detail.empty()) j["detail"] = detail;
  return j;
}

nlohmann::json TrainResult::timing_json() const {
  nlohmann::json j = {
      {"elapsed_seconds", state.elapsed_seconds},
      {"train_seconds", state.train_seconds},
      {"eval_seconds", state.eval_seconds},
      {"train_tokens_per_s", state.train_seconds > 0 ? static_cast<double>(state.tokens) / state.train_seconds : 0.0},
      {"peak_training_bytes",
       state.peak_training_bytes ? nlohmann::json(*state.peak_training_bytes) : nlohmann::json(nullptr)},
      {"resumed_from_step", resumed_from_step ? nlohmann::json(*resumed_from_step) : nlohmann::json(nullptr)},
      {"threads", threads},
      {"lanes", lanes},
      {"device", device},
      {"world_size", world_size},
      {"backend", backend}};
  if (!checkpoint_notes.empty()) j["checkpoint_notes"] = checkpoint_notes;
  return j;
}

}  // namespace k3lab::train
