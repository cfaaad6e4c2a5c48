#pragma once
// The shared trainer of the proxy-ablation experiments: it trains any TrainingTask (training_task.hpp);
// trainer.hpp is its language-model entry point (DecoderLM and cross-entropy).
//
// Contract:
// - Trains exactly token_budget tokens in steps of batch_tokens (sequence_length windows in the
//   order of data_order.hpp), never stopping early for a weak run.
// - Evaluates every eval_interval_tokens (what the task measures), the last evaluation exactly at the
//   budget, and checkpoints at each evaluation.
// - Resumes from the latest checkpoint in checkpoint_dir; on CPU a resumed run gives bitwise the
//   losses of an uninterrupted one (same thread count).
// - NaN/inf loss or gradient, and out-of-memory, end the run as a Failed result with a class; loss
//   spikes are recorded events; the safety timeout ends it as TimedOut (incomplete, never compared);
//   a stop request checkpoints and returns Interrupted.
// - Data parallel (config.distributed, world size W > 1): batch tokens, data order and token budget
//   stay global. Rank k trains rows [k*R/W, (k+1)*R/W) of each step's R rows; gradients are summed
//   across ranks and divided by W, so the update is the one-process update of the same global batch
//   (up to float summation order); the loss is the global mean; the clip uses the global norm. Every
//   stop condition (NaN, OOM, stop request, safety timeout) is agreed across ranks, so all ranks end
//   at the same step with the same status. Evaluations run on every rank identically (no rank waits
//   on another's evaluation past the collective timeout); rank 0 alone writes checkpoints, every rank
//   resumes from them. A peer that dies or hangs ends the run as Failed, class rank-failure. Buffers
//   and task state are not synchronised: a task whose after_step moves them from its own rank's
//   batch must not run data parallel.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/train/checkpoint.hpp"
#include "k3lab/train/dataset.hpp"
#include "k3lab/train/optimizer.hpp"
#include "k3lab/train/training_task.hpp"

namespace k3lab::train {

class DistributedContext;

struct LossSpikeRule {
  std::int64_t window = 20;  // steps in the running median
  double factor = 2.0;       // a loss above factor x the median of the previous window is a spike
};

// How a task is trained; the same for every task.
struct LoopConfig {
  std::uint64_t order_seed = 0;        // the data order (same for every arm and seed of an experiment)
  std::int64_t token_budget = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t eval_interval_tokens = 0;  // evaluation and checkpoint cadence
  std::int64_t micro_batch_rows = 0;   // rows per forward/backward; 0: as many as fit 16384 tokens
  OptimizerSpec optimizer;
  OptimizerFactory optimizer_factory;  // empty: the built-in optimizer named by optimizer.name (adamw)
  double grad_clip = 1.0;              // global gradient-norm clip (0: none)
  LossSpikeRule spikes;
  double safety_timeout_seconds = 72.0 * 3600.0;
  std::filesystem::path checkpoint_dir;  // empty: no checkpoints, no resume
  std::string device = "cpu";            // auto | cpu | cuda[:N]
  int threads = 0;                       // torch::set_num_threads; 0: leave LibTorch's default
  // Data-parallel group (not owned); null or world size 1: this process trains alone. Training runs
  // on the group's device.
  DistributedContext* distributed = nullptr;

  // Throws std::invalid_argument naming the field when the budget arithmetic does not divide exactly.
  void validate() const;
  std::int64_t total_steps() const { return token_budget / batch_tokens; }
  std::int64_t rows_per_step() const { return batch_tokens / sequence_length; }
  int world_size() const;
  std::int64_t rows_per_rank() const { return rows_per_step() / world_size(); }
  // Rows per forward on each rank: micro_batch_rows (at most rows_per_rank()), or automatic (a divisor of
  // rows_per_rank()).
  std::int64_t resolved_micro_batch_rows() const;
  // Everything here that determines the losses (not device/threads/checkpoint paths/world size, which,
  // like threads, change only the float summation order); with the task's identity, hashed into
  // checkpoints.
  nlohmann::json to_json() const;
};

struct LoopHooks {
  // Called with each evaluation record after it is checkpointed (e.g. a ledger note). Rank 0 only.
  std::function<void(const nlohmann::json& record)> on_evaluation;
  std::function<void(double fraction)> progress;  // rank 0 only
  // Called on resume for each checkpoint that could not be used (train/checkpoint.hpp CheckpointLoad
  // notes: which one, why, and what was loaded instead), e.g. a ledger note. Rank 0 only.
  std::function<void(const nlohmann::json& note)> on_checkpoint_note;
  // Test seam: sees each micro-batch loss before backward and may replace it (fault injection).
  std::function<torch::Tensor(std::int64_t step, const torch::Tensor& loss)> transform_loss;
  // Test seam: called after each completed step; returning true simulates a kill (no checkpoint is
  // written beyond the ones already on disk, and the result is Interrupted).
  std::function<bool(std::int64_t step)> crash_after_step;
  const std::atomic<bool>* stop_requested = nullptr;
};

struct TrainResult {
  enum class Status { Completed, Failed, TimedOut, Interrupted };
  Status status = Status::Completed;
  std::string failure_class;  // Failed: nan-loss | non-finite-gradient | oom | rank-failure
  std::string detail;
  TrainerState state;         // losses, evaluations, spikes, step extras, timings
  std::int64_t parameters = 0;
  std::optional<std::int64_t> resumed_from_step;
  std::vector<nlohmann::json> checkpoint_notes;  // checkpoints skipped on resume (see LoopHooks)
  int threads = 0;
  int lanes = 1;  // micro-batches trained side by side (micro_batch_lanes.hpp)
  std::string device;
  int world_size = 1;              // data-parallel ranks
  std::string backend = "none";    // c10d backend: none | gloo | nccl

  static std::string to_string(Status status);
  // Deterministic summary (no timings): status, tokens, steps, losses, evaluations, spikes.
  nlohmann::json to_json() const;
  // Wall-clock figures: seconds, tokens/s, peak training memory; where it ran (device, threads, lanes,
  // world size, backend). Tokens/s counts every rank's tokens; peak memory is this rank's.
  nlohmann::json timing_json() const;
};

// Trains `task` on `data` as `config` says; the task's model ends on the training device.
TrainResult train_task(TrainingTask& task, const LoopConfig& config, const Dataset& data, const LoopHooks& hooks = {});

}  // namespace k3lab::train
