#include "k3lab/train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <system_error>

#include <torch/serialize.h>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/resume_refused.hpp"

namespace k3lab::train {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "ckpt-";

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path.string() + " is not valid JSON (" + e.what() + ")");
  }
}

// torch's archive writer does not fsync; a checkpoint is renamed into place only after its files are
// on disk.
void fsync_file(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + " to flush it: " + std::strerror(errno));
  const int result = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (result != 0) {
    throw std::runtime_error("cannot flush " + path.string() + ": " + std::strerror(err) +
                             (err == ENOSPC ? "; the disk is full: free space and run again" : ""));
  }
}

// ckpt-<n> -> n; -1 for any other name (stale .partial folders, files, step-<N> folders of older builds).
long folder_number(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return -1;
  const auto digits = name.substr(std::string(kPrefix).size());
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stol(digits);
}

bool is_checkpoint_folder(const fs::directory_entry& entry) {
  const auto name = entry.path().filename().string();
  return entry.is_directory() && (folder_number(name) >= 0 || name.rfind("step-", 0) == 0);
}

// Complete checkpoint folders, newest first (ckpt-<n> by n, then the step-<N> folders of older builds).
std::vector<std::string> complete_folders(const fs::path& dir) {
  std::vector<std::string> names;
  if (!fs::is_directory(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (is_checkpoint_folder(entry)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const long na = folder_number(a), nb = folder_number(b);
    return na != nb ? na > nb : a > b;
  });
  return names;
}

// The archive is streamed through our own writer, which always tells LibTorch it wrote everything and
// keeps the first error: when LibTorch's own file writer fails (a full disk), its destructor throws
// again while finishing the zip, and the process ends in std::terminate (exit 134) instead of an error.
void save_archive(const fs::path& file, const std::function<void(torch::serialize::OutputArchive&)>& fill) {
  torch::serialize::OutputArchive archive;
  fill(archive);
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot create " + file.string());
  int first_error = 0;
  archive.save_to([&](const void* data, size_t size) -> size_t {
    const char* bytes = static_cast<const char*>(data);
    for (size_t done = 0; first_error == 0 && done < size;) {
      ssize_t n = static_cast<ssize_t>(size - done);  // no data: a gap of zeros, skipped over
      if (bytes) {
        n = ::write(fd, bytes + done, size - done);
      } else if (::lseek(fd, static_cast<off_t>(n), SEEK_CUR) < 0) {
        n = -1;
      }
      if (n < 0 && errno != EINTR) first_error = errno;
      if (n > 0) done += static_cast<size_t>(n);
    }
    return size;
  });
  if (::close(fd) != 0 && first_error == 0) first_error = errno;
  if (first_error != 0) {
    throw std::system_error(first_error, std::generic_category(),
                            "cannot write the checkpoint file " + file.string() +
                                (first_error == ENOSPC ? "; the disk is full: free space and run again" : ""));
  }
  fsync_file(file);
}

// Removes every checkpoint folder but `keep` and every unfinished .partial folder.
void prune(const fs::path& dir, const std::vector<std::string>& keep) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    const bool partial = entry.is_directory() && name.size() > 8 && name.front() == '.' &&
                         name.compare(name.size() - 8, 8, ".partial") == 0;
    const bool stale = is_checkpoint_folder(entry) && std::find(keep.begin(), keep.end(), name) == keep.end();
    if (partial || stale) fs::remove_all(entry.path());
  }
  core::fsync_directory(dir);
}

// One checkpoint read back whole, not yet applied: a torn file fails here, before the model is touched.
struct ReadCheckpoint {
  TrainerState state;
  torch::serialize::InputArchive model;
  torch::serialize::InputArchive optimizer;
  std::optional<torch::serialize::InputArchive> task;
};

void read_checkpoint(const fs::path& folder, const torch::Device& device, const TrainingTask* task,
                     ReadCheckpoint& read) {
  read.state = TrainerState::from_json(read_json(folder / "state.json"));
  read.model.load_from((folder / "model.pt").string(), device);
  read.optimizer.load_from((folder / "optimizer.pt").string(), device);
  if (task && task->has_state()) {
    const auto task_file = folder / "task.pt";
    if (!fs::exists(task_file)) throw std::runtime_error("it has no task.pt for this task's state");
    read.task.emplace();
    read.task->load_from(task_file.string(), device);
  }
}

// The folders to try, newest first: latest.json's, the one before it, then any other complete folder.
// Throws when latest.json names another configuration.
std::vector<std::string> resume_candidates(const fs::path& dir, const std::string& config_sha256, int world_size,
                                           std::vector<nlohmann::json>& notes) {
  std::vector<std::string> order;
  const auto latest_path = dir / "latest.json";
  std::optional<nlohmann::json> latest;
  if (fs::exists(latest_path)) {
    try {
      latest = read_json(latest_path);
      latest->at("folder").get<std::string>();
    } catch (const std::exception& e) {
      latest.reset();
      notes.push_back({{"checkpoint", "latest.json"}, {"error", e.what()}});
    }
  }
  if (latest) {
    const int recorded_world = latest->value("world_size", 1);
    if (recorded_world != world_size) {
      throw core::ResumeRefused(
          "checkpoint " + dir.string() + " was written by " + std::to_string(recorded_world) +
          " data-parallel rank(s) and this command has " + std::to_string(world_size) +
          ": a unit resumes only with the world size that started it. Run it again with " +
          std::to_string(recorded_world) + " rank(s) (WORLD_SIZE, or --slurm-opt ntasks=" +
          std::to_string(recorded_world) + "), or move the folder away to restart this unit from step 0");
    }
    const std::string recorded = latest->value("config_sha256", "");
    if (recorded != config_sha256) {
      throw core::ResumeRefused("checkpoint " + dir.string() + " belongs to another training configuration (sha256 " +
                               recorded + ", now " + config_sha256 +
                               "); it cannot be resumed. Move the folder away to restart this unit from scratch");
    }
    order.push_back(latest->at("folder").get<std::string>());
    if (latest->contains("previous") && (*latest)["previous"].is_string()) order.push_back((*latest)["previous"]);
  }
  for (const auto& name : complete_folders(dir)) {
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  return order;
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
          {"config_sha256", config_sha256},
          {"world_size", world_size}};
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
  s.world_size = j.value("world_size", 1);
  return s;
}

void save_checkpoint(const fs::path& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainerState& state, const TrainingTask* task) {
  fs::create_directories(dir);
  const auto existing = complete_folders(dir);
  const long number = existing.empty() ? 0 : std::max(0L, folder_number(existing.front())) + 1;
  const std::string name = kPrefix + std::to_string(number);
  const auto partial = dir / ("." + name + ".partial");
  fs::remove_all(partial);
  fs::create_directory(partial);
  save_archive(partial / "model.pt", [&](auto& archive) { model.save(archive); });
  save_archive(partial / "optimizer.pt", [&](auto& archive) { optimizer.save(archive); });
  if (task && task->has_state()) {
    save_archive(partial / "task.pt", [&](auto& archive) { task->save_state(archive); });
  }
  core::write_file_atomically(partial / "state.json", state.to_json().dump());  // fsyncs the folder too
  fs::rename(partial, dir / name);
  core::fsync_directory(dir);
  nlohmann::json previous = nullptr;
  if (!existing.empty()) previous = existing.front();
  const nlohmann::json latest = {{"step", state.step}, {"folder", name}, {"previous", previous},
                                 {"config_sha256", state.config_sha256}, {"world_size", state.world_size}};
  core::write_file_atomically(dir / "latest.json", latest.dump());
  std::vector<std::string> keep = {name};
  if (!existing.empty()) keep.push_back(existing.front());
  prune(dir, keep);
}

CheckpointLoad load_checkpoint(const fs::path& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                               const std::string& config_sha256, int world_size, TrainingTask* task) {
  CheckpointLoad load;
  // Tensors are restored onto the device the model lives on (the optimizer state follows it).
  const auto parameters = model.parameters();
  const torch::Device device = parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  for (const auto& name : resume_candidates(dir, config_sha256, world_size, load.notes)) {
    ReadCheckpoint read;
    try {
      read_checkpoint(dir / name, device, task, read);
      if (read.state.config_sha256 != config_sha256) throw std::runtime_error("it belongs to another configuration");
      if (read.state.world_size != world_size) throw std::runtime_error("it belongs to another world size");
    } catch (const std::exception& e) {
      load.notes.push_back({{"checkpoint", name}, {"error", e.what()}});
      continue;
    }
    model.load(read.model);
    optimizer.load(read.optimizer);
    if (read.task) task->restore_state(*read.task);
    for (auto& note : load.notes) note["action"] = "resumed from " + name + " (step " + std::to_string(read.state.step) + ")";
    load.state = std::move(read.state);
    load.folder = name;
    return load;
  }
  for (auto& note : load.notes) note["action"] = "no checkpoint loads: the unit restarts from step 0";
  return load;
}

}  // namespace k3lab::train
