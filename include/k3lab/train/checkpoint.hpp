#pragma once
// Training checkpoints: model, optimizer, the task's own state and the trainer's (step, tokens, losses,
// the evaluations and step extras so far, elapsed time), enough to continue a killed run bit for bit
// on CPU.
//
// Layout under the unit's checkpoint folder:
//   step-<N>/model.pt, step-<N>/optimizer.pt, step-<N>/state.json,
//   step-<N>/task.pt (only for a task with state, TrainingTask::has_state)
//   latest.json   {"step": N, "folder": "step-<N>", "config_sha256": ...}, replaced atomically last
// A checkpoint is complete only once latest.json names it; older step folders are removed after
// the new one is in place (checkpoints are bulky: 120M parameters with AdamW state is ~1.4 GB).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "k3lab/train/training_task.hpp"

namespace k3lab::train {

struct TrainerState {
  std::int64_t step = 0;    // optimizer steps taken
  std::int64_t tokens = 0;  // training tokens consumed
  double elapsed_seconds = 0;        // wall time across every attempt (for the safety timeout)
  double train_seconds = 0;          // wall time inside training steps
  double eval_seconds = 0;
  std::vector<double> losses;        // training loss of every step
  nlohmann::json evaluations = nlohmann::json::array();
  nlohmann::json loss_spikes = nlohmann::json::array();
  nlohmann::json step_extras = nlohmann::json::array();  // {"step": s, "extras": ...} for steps with extras
  std::optional<std::int64_t> peak_training_bytes;
  std::string config_sha256;         // the trainer configuration this state belongs to

  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j);
};

// `task` (may be null) adds task.pt when it has state.
void save_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainerState& state, const TrainingTask* task = nullptr);

// Loads the latest complete checkpoint into model, optimizer and (when it has state) task; nullopt
// when there is none. Throws std::runtime_error when it belongs to another configuration
// (config_sha256 differs) or lacks the task's state.
std::optional<TrainerState> load_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model,
                                            torch::optim::Optimizer& optimizer, const std::string& config_sha256,
                                            TrainingTask* task = nullptr);

}  // namespace k3lab::train
