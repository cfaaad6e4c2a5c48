#pragma once
// What an experiment gives the trainer (task_trainer.hpp): a model, the loss of a batch, what happens
// after each update, what to measure at evaluation points, and any state a checkpoint must carry.
// The trainer owns everything else: data order, micro-batching, the optimizer and its schedule, the
// gradient clip, failure outcomes, the loss-spike rule, checkpoints and resume, the safety timeout
// and data parallelism. decoder_lm_task.hpp is the language-model task most experiments use.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>
#include <torch/serialize/archive.h>
#include <torch/types.h>

namespace k3lab::train {

// One micro-batch of training windows, on the training device.
struct Batch {
  torch::Tensor inputs;   // (rows, T) int64
  torch::Tensor targets;  // (rows, T) int64: inputs shifted by one token
  std::int64_t step = 0;  // the 0-based optimizer step it belongs to
};

struct TaskLoss {
  // Scalar, the mean over the batch's tokens: the training loss the run records, checks for NaN and
  // judges spikes by.
  torch::Tensor loss;
  // Scalar added to `loss` for the gradient only (undefined: none), e.g. a load-balancing term.
  torch::Tensor auxiliary;
  // Measurements of this step (null: none); handed to after_step and kept in TrainerState::step_extras.
  nlohmann::json extras;
};

// A step that has just been applied (optimizer update done).
struct StepReport {
  std::int64_t step = 0;  // 0-based
  double loss = 0;        // the recorded training loss (the global mean under data parallelism)
  nlohmann::json extras;  // this rank's TaskLoss::extras; with several micro-batches, one entry per micro-batch
};

struct EvalPoint {
  const torch::Device& device;
  std::int64_t tokens = 0;            // training tokens seen
  std::int64_t step = 0;
  bool final = false;                 // the evaluation at the token budget
  std::int64_t micro_batch_rows = 0;  // rows per forward the run trains with
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  // The trained module; the trainer moves it to the training device before building the optimizer.
  virtual torch::nn::Module& model() = 0;

  // What determines the losses besides the trainer's configuration (model shape, initialisation seed,
  // the task's own settings). Merged into the configuration hash that checkpoints are bound to.
  virtual nlohmann::json identity() const = 0;

  // The loss of one micro-batch (the model is in training mode). Data parallel: runs on every rank.
  virtual TaskLoss loss(const Batch& batch) = 0;

  // Whether loss() may run on several threads at once, for different micro-batches of a step (it
  // changes no state and its extras depend only on the batch). Then the CPU trainer runs micro-batches
  // side by side (micro_batch_lanes.hpp); the result is the same either way.
  virtual bool loss_is_reentrant() const { return false; }

  // After each optimizer update, on every rank, e.g. to move non-gradient parameters. Returns the
  // step's extras to keep (null: keep none); the default keeps what loss() returned.
  virtual nlohmann::json after_step(const StepReport& report) { return report.extras; }

  // At each evaluation point (the model is in evaluation mode, gradients off): the fields to add to
  // the evaluation record, or null when the task measures nothing (then no record is kept, and the
  // point only checkpoints). Data parallel: runs on every rank identically.
  virtual nlohmann::json evaluate(const EvalPoint&) { return nullptr; }

  // State a checkpoint carries beyond the model's parameters and buffers and the trainer's own state
  // (e.g. accumulated measurements); restore_state reads what save_state wrote.
  virtual bool has_state() const { return false; }
  virtual void save_state(torch::serialize::OutputArchive&) const {}
  virtual void restore_state(torch::serialize::InputArchive&) {}

  // Before the first step of each attempt, after any restore: `step` is where this attempt starts
  // (0, or the checkpoint's step), e.g. to cut an append-only log back to the steps before it.
  virtual void begin(std::int64_t /*step*/) {}
};

// Mean next-token cross-entropy in float32: logits (B, T, V), targets (B, T) -> scalar.
torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets);

// Token ids (rows x cols, row-major) as a (rows, cols) int64 tensor on `device`.
torch::Tensor token_tensor(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t cols,
                           const torch::Device& device);

}  // namespace k3lab::train
