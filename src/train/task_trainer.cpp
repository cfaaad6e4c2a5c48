#include "k3lab/train/thread_pools.hpp"
#include "k3lab/train/task_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/core/elapsed.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/train/data_order.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"
#include "k3lab/train/micro_batch_lanes.hpp"
#include "rank_agreement.hpp"

namespace k3lab::train {
namespace {

using Clock = std::chrono::steady_clock;
using core::seconds_since;

double median_of_last(const std::vector<double>& values, std::int64_t window) {
  std::vector<double> tail(values.end() - window, values.end());
  std::nth_element(tail.begin(), tail.begin() + window / 2, tail.end());
  return tail[static_cast<std::size_t>(window / 2)];
}

StepFailure out_of_memory(const std::string& where, std::int64_t step, const std::exception& e) {
  return {"oom", "out of memory " + where + std::to_string(step) + ": " + e.what()};
}

// The configuration hash a checkpoint is bound to: the loop's settings and the task's identity.
std::string configuration_sha256(const LoopConfig& config, const TrainingTask& task) {
  auto hashed = config.to_json();
  const auto identity = task.identity();
  for (const auto& [key, value] : identity.items()) {
    if (hashed.contains(key)) throw std::logic_error("trainer: the task's identity repeats the loop setting \"" + key + "\"");
    hashed[key] = value;
  }
  return core::sha256_hex(hashed.dump());
}

// What the micro-batches of one step produced on this rank.
struct StepLosses {
  double loss = 0.0;          // mean over this rank's rows (after agreement: over every rank's)
  double failed_value = 0.0;  // the non-finite loss, for the peers' message
  nlohmann::json extras;
  std::optional<StepFailure> failure;
};

// One training attempt of a task: set up (device, optimizer, resume), then step until the budget, a
// failure, a stop request or the safety timeout.
class TrainingRun {
 public:
  TrainingRun(TrainingTask& task, const LoopConfig& config, const Dataset& data, const LoopHooks& hooks);
  TrainResult run();

 private:
  void place_model();
  void resume();
  std::optional<TrainResult::Status> agreed_stop();
  MicroBatchGradient micro_batch(std::int64_t index, bool apart, const std::vector<torch::Tensor>& parameters);
  StepLosses forward_backward();
  void agree_on_losses(StepLosses& losses);
  std::optional<StepFailure> apply_update();
  void record_step(const StepLosses& losses);
  std::optional<StepFailure> evaluate();
  void checkpoint();
  TrainResult stop(TrainResult::Status status);
  TrainResult fail(const StepFailure& failure);
  TrainResult rank_failure(const RankFailure& e);

  TrainingTask& task_;
  const LoopConfig& config_;
  const Dataset& data_;
  const LoopHooks& hooks_;
  DistributedContext* dist_;
  int world_, rank_;
  torch::Device device_{torch::kCPU};
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  const WindowOrder order_;
  std::int64_t micro_;
  int lanes_ = 1;  // micro-batches trained side by side (micro_batch_lanes.hpp)
  TrainResult result_;
  TrainerState& state_ = result_.state;
  double elapsed_before_ = 0;
  Clock::time_point attempt_start_;
  std::optional<std::int64_t> checkpoint_step_;
};

TrainingRun::TrainingRun(TrainingTask& task, const LoopConfig& config, const Dataset& data, const LoopHooks& hooks)
    : task_(task),
      config_(config),
      data_(data),
      hooks_(hooks),
      dist_(config.world_size() > 1 ? config.distributed : nullptr),
      world_(config.world_size()),
      rank_(dist_ ? dist_->rank() : 0),
      order_(data.train.size(), config.sequence_length, config.order_seed),
      micro_(config.resolved_micro_batch_rows()) {
  place_model();
  optimizer_ = make_optimizer(config_.optimizer, task_.model(), config_.optimizer_factory);
  resume();
}

void TrainingRun::place_model() {
  apply_thread_policy(core::choose_thread_policy(config_.threads));
  device_ = resolve_device(config_.device);
  if (dist_) {
    if (device_.type() != dist_->device().type()) {
      throw std::invalid_argument("trainer: device " + device_.str() + " differs from the data-parallel group's " +
                                  dist_->device().str() + "; join the group for the training device");
    }
    device_ = dist_->device();
  }
  result_.threads = torch::get_num_threads();
  if (task_.loss_is_reentrant()) lanes_ = micro_batch_lanes(result_.threads, config_.rows_per_rank() / micro_, device_);
  result_.lanes = lanes_;
  result_.device = device_.str();
  result_.world_size = world_;
  result_.backend = dist_ ? dist_->backend() : "none";
  task_.model().to(device_);
  result_.parameters = models::parameter_count(task_.model());
}

void TrainingRun::resume() {
  state_.config_sha256 = configuration_sha256(config_, task_);
  state_.world_size = world_;
  if (!config_.checkpoint_dir.empty()) {
    auto loaded =
        load_checkpoint(config_.checkpoint_dir, task_.model(), *optimizer_, state_.config_sha256, world_, &task_);
    result_.checkpoint_notes = loaded.notes;
    if (hooks_.on_checkpoint_note && rank_ == 0) {
      for (const auto& note : loaded.notes) hooks_.on_checkpoint_note(note);
    }
    if (loaded.state) {
      state_ = std::move(*loaded.state);
      result_.resumed_from_step = state_.step;
    }
  }
  checkpoint_step_ = result_.resumed_from_step;
  task_.begin(state_.step);
  elapsed_before_ = state_.elapsed_seconds;
  attempt_start_ = Clock::now();
}

TrainResult TrainingRun::run() {
  const std::int64_t total_steps = config_.total_steps();
  const std::int64_t steps_per_eval = config_.eval_interval_tokens / config_.batch_tokens;
  try {
    if (dist_) synchronize_start(*dist_, task_.model(), state_.step);
    reset_peak_memory(device_);
    task_.model().train();
    while (state_.step < total_steps) {
      if (const auto status = agreed_stop()) return stop(*status);
      const auto step_start = Clock::now();
      auto losses = forward_backward();
      if (dist_) agree_on_losses(losses);
      if (!losses.failure) losses.failure = apply_update();
      if (losses.failure) return fail(*losses.failure);
      record_step(losses);
      state_.train_seconds += seconds_since(step_start);
      if (state_.step % steps_per_eval == 0) {
        if (const auto failure = evaluate()) return fail(*failure);
      }
      if (hooks_.progress && rank_ == 0) hooks_.progress(static_cast<double>(state_.step) / static_cast<double>(total_steps));
      if (hooks_.crash_after_step && hooks_.crash_after_step(state_.step)) {
        result_.status = TrainResult::Status::Interrupted;
        result_.detail = "simulated kill after step " + std::to_string(state_.step);
        return result_;
      }
    }
  } catch (const RankFailure& e) {
    return rank_failure(e);
  }
  state_.elapsed_seconds = elapsed_before_ + seconds_since(attempt_start_);
  result_.status = TrainResult::Status::Completed;
  return result_;
}

// A stop request or the safety timeout, agreed so that every rank ends at the same step.
std::optional<TrainResult::Status> TrainingRun::agreed_stop() {
  bool stop = hooks_.stop_requested && hooks_.stop_requested->load();
  bool timed_out = elapsed_before_ + seconds_since(attempt_start_) > config_.safety_timeout_seconds;
  if (dist_) {
    const auto any = dist_->all_reduce_sum({stop ? 1.0 : 0.0, timed_out ? 1.0 : 0.0});
    stop = any[0] > 0;
    timed_out = any[1] > 0;
  }
  if (stop) return TrainResult::Status::Interrupted;
  if (timed_out) return TrainResult::Status::TimedOut;
  return std::nullopt;
}

// One micro-batch's loss and gradient (kept apart when lanes run side by side: micro_batch_lanes.hpp).
MicroBatchGradient TrainingRun::micro_batch(std::int64_t index, bool apart,
                                            const std::vector<torch::Tensor>& parameters) {
  const std::int64_t local_rows = config_.rows_per_rank();
  const std::int64_t T = config_.sequence_length;
  const auto windows =
      training_batch(data_.train, order_, state_.step * config_.rows_per_step() + rank_ * local_rows + index * micro_,
                     micro_, data_.vocab_size);
  const Batch batch{token_tensor(windows.inputs, micro_, T, device_), token_tensor(windows.targets, micro_, T, device_),
                    state_.step};
  auto loss = task_.loss(batch);
  if (hooks_.transform_loss) loss.loss = hooks_.transform_loss(state_.step, loss.loss);
  MicroBatchGradient out{loss.loss.item<double>(), std::move(loss.extras), {}};
  if (std::isfinite(out.loss)) {
    const auto objective = loss.auxiliary.defined() ? loss.loss + loss.auxiliary : loss.loss;
    const double share = static_cast<double>(micro_) / static_cast<double>(local_rows);
    out.gradients = backward_micro_batch(objective * share, parameters, apart);
  }
  return out;
}

StepLosses TrainingRun::forward_backward() {
  const std::int64_t local_rows = config_.rows_per_rank();
  StepLosses out;
  nlohmann::json micro_extras = nlohmann::json::array();
  bool any_extras = false;
  try {
    set_learning_rate(*optimizer_, scheduled_learning_rate(config_.optimizer, state_.step, config_.total_steps()));
    optimizer_->zero_grad();
    const auto parameters = trainable_parameters(task_.model());
    run_in_lanes(
        lanes_, result_.threads, local_rows / micro_,
        [&](std::int64_t index, bool apart) { return micro_batch(index, apart, parameters); },
        [&](std::int64_t, MicroBatchGradient& g) {
          if (!std::isfinite(g.loss)) {
            out.failed_value = g.loss;
            out.failure = StepFailure{"nan-loss", "training loss is " + std::to_string(g.loss) + " at step " +
                                                      std::to_string(state_.step) + " (tokens " +
                                                      std::to_string(state_.tokens) + ")"};
            return false;
          }
          out.loss += g.loss * static_cast<double>(micro_) / static_cast<double>(local_rows);
          accumulate_gradients(parameters, g.gradients);
          any_extras = any_extras || !g.extras.is_null();
          micro_extras.push_back(std::move(g.extras));
          return true;
        });
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    out.failure = out_of_memory("at step ", state_.step, e);
  }
  if (any_extras) out.extras = micro_extras.size() == 1 ? micro_extras[0] : micro_extras;
  return out;
}

// Data parallel: [status code per rank | loss per rank]: all stop on any rank's failure; the loss is
// the global mean.
void TrainingRun::agree_on_losses(StepLosses& losses) {
  auto outcome = rank_slots(2 * world_, rank_, failure_code(losses.failure));
  outcome[static_cast<std::size_t>(world_ + rank_)] = losses.failure ? losses.failed_value : losses.loss;
  outcome = dist_->all_reduce_sum(outcome);
  const std::vector<double> codes(outcome.begin(), outcome.begin() + world_);
  const std::vector<double> values(outcome.begin() + world_, outcome.end());
  losses.failure = agreed_failure(codes, values, losses.failure, rank_, "at step " + std::to_string(state_.step));
  losses.loss = 0.0;
  for (double value : values) losses.loss += value;
  losses.loss /= static_cast<double>(world_);
}

// Averages gradients across ranks, clips, and steps the optimizer unless the gradient is non-finite
// (after the all-reduce every rank holds the same gradients, so this verdict is common).
std::optional<StepFailure> TrainingRun::apply_update() {
  auto& model = task_.model();
  try {
    if (dist_) all_reduce_gradients(*dist_, model);
    double grad_norm = 0.0;
    if (config_.grad_clip > 0) {
      grad_norm = torch::nn::utils::clip_grad_norm_(model.parameters(), config_.grad_clip);
    } else {
      for (const auto& p : model.parameters()) {
        if (p.grad().defined()) grad_norm += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
      }
      grad_norm = std::sqrt(grad_norm);
    }
    if (!std::isfinite(grad_norm)) {
      return StepFailure{"non-finite-gradient",
                         "gradient norm is " + std::to_string(grad_norm) + " at step " + std::to_string(state_.step)};
    }
    optimizer_->step();
  } catch (const RankFailure&) {
    throw;
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    return out_of_memory("at step ", state_.step, e);
  }
  return std::nullopt;
}

// The task's after-update work, then the spike rule and the step's records.
void TrainingRun::record_step(const StepLosses& losses) {
  auto extras = task_.after_step({state_.step, losses.loss, losses.extras});
  if (!extras.is_null()) state_.step_extras.push_back({{"step", state_.step}, {"extras", std::move(extras)}});
  if (static_cast<std::int64_t>(state_.losses.size()) >= config_.spikes.window) {
    const double median = median_of_last(state_.losses, config_.spikes.window);
    if (losses.loss > config_.spikes.factor * median) {
      state_.loss_spikes.push_back({{"step", state_.step}, {"tokens", state_.tokens}, {"loss", losses.loss}, {"median", median}});
    }
  }
  state_.losses.push_back(losses.loss);
  state_.step += 1;
  state_.tokens += config_.batch_tokens;
  if (const auto peak = peak_memory_bytes(device_)) {
    state_.peak_training_bytes = std::max(state_.peak_training_bytes.value_or(0), *peak);
  }
}

// The task's measurements at an evaluation point, then a checkpoint.
std::optional<StepFailure> TrainingRun::evaluate() {
  const auto eval_start = Clock::now();
  auto& model = task_.model();
  model.eval();
  nlohmann::json record = {{"step", state_.step}, {"tokens", state_.tokens}};
  nlohmann::json fields;
  std::optional<StepFailure> failure;
  try {
    fields = task_.evaluate({device_, state_.tokens, state_.step, state_.step == config_.total_steps(), micro_});
  } catch (const std::exception& e) {
    if (!is_out_of_memory(e)) throw;
    failure = out_of_memory("in the evaluation at step ", state_.step, e);
  }
  if (dist_) {
    const auto codes = dist_->all_reduce_sum(rank_slots(world_, rank_, failure_code(failure)));
    failure = agreed_failure(codes, codes, failure, rank_, "in the evaluation at step " + std::to_string(state_.step));
  }
  if (failure) return failure;
  model.train();
  if (!fields.is_null()) {
    record.update(fields);
    state_.evaluations.push_back(record);
  }
  state_.eval_seconds += seconds_since(eval_start);
  reset_peak_memory(device_);  // training peaks exclude the evaluation's
  checkpoint();
  if (hooks_.on_evaluation && rank_ == 0 && !fields.is_null()) hooks_.on_evaluation(record);
  return std::nullopt;
}

void TrainingRun::checkpoint() {
  state_.elapsed_seconds = elapsed_before_ + seconds_since(attempt_start_);
  if (config_.checkpoint_dir.empty()) return;
  if (rank_ == 0) save_checkpoint(config_.checkpoint_dir, task_.model(), *optimizer_, state_, &task_);
  checkpoint_step_ = state_.step;
}

TrainResult TrainingRun::stop(TrainResult::Status status) {
  checkpoint();
  result_.status = status;
  if (status == TrainResult::Status::Interrupted) {
    result_.detail = "stopped on request at step " + std::to_string(state_.step) + "; the checkpoint resumes it";
  } else {
    result_.detail = "safety timeout of " + std::to_string(config_.safety_timeout_seconds / 3600.0) + " h reached after " +
                     std::to_string(state_.tokens) + " of " + std::to_string(config_.token_budget) +
                     " tokens; the run is incomplete and its partial checkpoint is not a comparison";
  }
  return result_;
}

TrainResult TrainingRun::fail(const StepFailure& failure) {
  state_.elapsed_seconds = elapsed_before_ + seconds_since(attempt_start_);
  result_.status = TrainResult::Status::Failed;
  result_.failure_class = failure.failure_class;
  result_.detail = failure.detail;
  return result_;
}

TrainResult TrainingRun::rank_failure(const RankFailure& e) {
  const std::string resume =
      config_.checkpoint_dir.empty() ? "this run keeps no checkpoints, so a rerun starts from step 0"
      : checkpoint_step_ ? "the checkpoint at step " + std::to_string(*checkpoint_step_) + " resumes it: run the same command again"
                         : "no checkpoint was written yet, so a rerun starts from step 0";
  return fail({"rank-failure", std::string(e.what()) + " at step " + std::to_string(state_.step) + "; " + resume});
}

}  // namespace

TrainResult train_task(TrainingTask& task, const LoopConfig& config, const Dataset& data, const LoopHooks& hooks) {
  config.validate();
  return TrainingRun(task, config, data, hooks).run();
}

}  // namespace k3lab::train
