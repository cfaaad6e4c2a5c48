#pragma once
// Training checkpoints: model, optimizer, the task's own state and the trainer's (step, tokens, losses,
// the evaluations and step extras so far, elapsed time), enough to continue a killed run bit for bit
// on CPU.
//
// Layout under the unit's checkpoint folder (docs/reliability.md, "Checkpoints"):
//   ckpt-<n>/model.pt, ckpt-<n>/optimizer.pt, ckpt-<n>/state.json,
//   ckpt-<n>/task.pt (only for a task with state, TrainingTask::has_state)
//   latest.json   {"step": S, "folder": "ckpt-<n>", "previous": "ckpt-<m>" | null, "config_sha256": ...,
//                  "world_size": W}
// Every save writes a new folder under a temporary name (.ckpt-<n>.partial), fsyncs each file and the
// folder, renames it into place and fsyncs the parent; latest.json moves (atomically) only after that.
// Nothing is ever rewritten in place. The two newest complete folders are kept, so that a checkpoint
// torn or unreadable on resume falls back to the one before it (checkpoints are bulky: 120M parameters
// with AdamW state is ~1.4 GB, so two of them ~2.8 GB).
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
  int world_size = 1;                // data-parallel ranks that trained it (absent in older checkpoints: 1)

  nlohmann::json to_json() const;
  static TrainerState from_json(const nlohmann::json& j);
};

// `task` (may be null) adds task.pt when it has state.
void save_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const TrainerState& state, const TrainingTask* task = nullptr);

// What resume found: the state to continue from (nullopt: start at step 0) and one note per checkpoint
// that could not be used, e.g. {"checkpoint": "ckpt-4", "error": "...", "action": "fell back to ckpt-3"}.
struct CheckpointLoad {
  std::optional<TrainerState> state;
  std::string folder;  // the folder loaded; empty when none
  std::vector<nlohmann::json> notes;
};

// Loads the newest checkpoint that reads back whole into model, optimizer and (when it has state) task.
// A torn or unreadable checkpoint is skipped with a note and the previous complete one is tried; when
// none loads, the state is nullopt (restart from step 0) with notes saying why. Throws
// core::ResumeRefused when latest.json names another world size (a unit resumes only with the ranks that
// started it: the per-rank micro-batch, part of the configuration, follows from them) or another
// configuration (config_sha256 differs: the user changed the design, which is not a fault to paper over).
CheckpointLoad load_checkpoint(const std::filesystem::path& dir, torch::nn::Module& model,
                               torch::optim::Optimizer& optimizer, const std::string& config_sha256,
                               int world_size, TrainingTask* task = nullptr);

}  // namespace k3lab::train
