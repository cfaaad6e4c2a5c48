#include "k3lab/train/checkpoint.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <torch/serialize.h>

#include "k3lab/core/atomic_file.hpp"

namespace k3lab::train {
namespace {

std::string step_folder(std::int64_t step) { return "step-" + std::to_string(step); }

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("checkpoint: cannot read " + path.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("checkpoint: " + path.string() + " is not valid JSON (" + e.what() +
                             "); remove the checkpoint folder to restart the unit from scratch");
  }
}

}  // namespace

nlohmann::json TrainerState::to_json() const {
  return {{"step", step},
          {"tokens", tokens},
          {"elapsed_seconds", elapsed_seconds},
          {"train_seconds", train_seconds},
          {"eval_seconds", eval_seconds},
          {"losses", losses},
          {"evaluations", evaluations},
          {"loss_spikes", loss_spikes},
          {"step_extras", step_extras},
          {"peak_training_bytes", peak_training_bytes ? nlohmann::json(*peak_training_bytes) : nlohmann::json(nullptr)},
          {"config_sha256", config_sha256}};
}

TrainerState TrainerState::from_json(const nlohmann::json& j) {
  TrainerState s;
  s.step = j.at("step").get<std::int64_t>();
  s.tokens = j.at("tokens").get<std::int64_t>();
  s.elapsed_seconds = j.at("elapsed_seconds").get<double>();
  s.train_seconds = j.at("train_seconds").get<double>();
  s.eval_seconds = j.at("eval_seconds").get<double>();
  s.losses = j.at("losses").get<std::vector<double>>();
  s.evaluations = j.at("evaluations");
  s.loss_spikes = j.at("loss_spikes");
  s.step_extras = j.value("step_extras", nlohmann::json::array());  // absent in checkpoints that predate it
  if (!j.at("peak_training_bytes").is_null()) s.peak_training_bytes = j.at("peak_training_bytes").get<std::int64_t>();
  s.config_sha256 = j.at("config_sha256").get<std::string>();
  return s;
}

void save_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainerState& state, const TrainingTask* task) {
  const auto folder = dir / step_folder(state.step);
  std::filesystem::create_directories(folder);
  {
    torch::serialize::OutputArchive archive;
    model.save(archive);
    archive.save_to((folder / "model.pt").string());
  }
  {
    torch::serialize::OutputArchive archive;
    optimizer.save(archive);
    archive.save_to((folder / "optimizer.pt").string());
  }
  if (task && task->has_state()) {
    torch::serialize::OutputArchive archive;
    task->save_state(archive);
    archive.save_to((folder / "task.pt").string());
  }
  core::write_file_atomically(folder / "state.json", state.to_json().dump());
  const nlohmann::json latest = {{"step", state.step}, {"folder", step_folder(state.step)},
                                 {"config_sha256", state.config_sha256}};
  core::write_file_atomically(dir / "latest.json", latest.dump());
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("step-", 0) == 0 && name != step_folder(state.step)) {
      std::filesystem::remove_all(entry.path());
    }
  }
}

std::optional<TrainerState> load_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model,
                                            torch::optim::Optimizer& optimizer, const std::string& config_sha256,
                                            TrainingTask* task) {
  const auto latest_path = dir / "latest.json";
  if (!std::filesystem::exists(latest_path)) return std::nullopt;
  const auto latest = read_json(latest_path);
  const std::string recorded = latest.value("config_sha256", "");
  if (recorded != config_sha256) {
    throw std::runtime_error("checkpoint " + dir.string() + " belongs to another training configuration (sha256 " +
                             recorded + ", now " + config_sha256 +
                             "); it cannot be resumed. Move the folder away to restart this unit from scratch");
  }
  const auto folder = dir / latest.at("folder").get<std::string>();
  // Tensors are restored onto the device the model lives on (the optimizer state follows it).
  const auto parameters = model.parameters();
  const torch::Device device = parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  auto state = TrainerState::from_json(read_json(folder / "state.json"));
  if (state.config_sha256 != config_sha256 || state.step != latest.at("step").get<std::int64_t>()) {
    throw std::runtime_error("checkpoint " + folder.string() + " does not match latest.json; remove " + dir.string() +
                             " to restart this unit from scratch");
  }
  {
    torch::serialize::InputArchive archive;
    archive.load_from((folder / "model.pt").string(), device);
    model.load(archive);
  }
  {
    torch::serialize::InputArchive archive;
    archive.load_from((folder / "optimizer.pt").string(), device);
    optimizer.load(archive);
  }
  if (task && task->has_state()) {
    const auto task_file = folder / "task.pt";
    if (!std::filesystem::exists(task_file)) {
      throw std::runtime_error("checkpoint " + folder.string() + " has no task.pt for this task's state; remove " +
                               dir.string() + " to restart this unit from scratch");
    }
    torch::serialize::InputArchive archive;
    archive.load_from(task_file.string(), device);
    task->restore_state(archive);
  }
  return state;
}

}  // namespace k3lab::train
