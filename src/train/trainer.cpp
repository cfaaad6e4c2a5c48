#include "k3lab/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/checkpoint.hpp"
#include "k3lab/train/data_order.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::train {
namespace {

// Auto micro-batch: as many whole rows as fit this many tokens (at least one row).
constexpr std::int64_t kAutoMicroBatchTokens = 16384;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw std::invalid_argument("trainer: " + field + " " + message);
}

torch::Tensor to_tensor(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t cols,
                        const torch::Device& device) {
  // (rows, cols) int64; the copy keeps the tensor independent of `values`.
  return torch::from_blob(const_cast<std::int64_t*>(values.data()), {rows, cols}, torch::kInt64).clone().to(device);
}

double median_of_last(const std::vector<double>& values, std::int64_t window) {
  std::vector<double> tail(values.end() - window, values.end());
  std::nth_element(tail.begin(), tail.begin() + window / 2, tail.end());
  return tail[static_cast<std::size_t>(window / 2)];
}

struct StepFailure {
  std::string failure_class;
  std::string detail;
};

// Data parallel: one slot per rank, this rank's value in its own slot; summed across ranks, every
// rank then sees every rank's value.
std::vector<double> rank_slots(int world, int rank, double value) {
  std::vector<double> slots(static_cast<std::size_t>(world), 0.0);
  slots[static_cast<std::size_t>(rank)] = value;
  return slots;
}

// Failure classes a rank reports to its peers, as codes in a float64 slot (0: none).
const std::vector<std::string> kAgreedFailures = {"", "nan-loss", "oom"};

double failure_code(const std::optional<StepFailure>& failure) {
  if (!failure) return 0.0;
  const auto it = std::find(kAgreedFailures.begin(), kAgreedFailures.end(), failure->failure_class);
  return static_cast<double>(it - kAgreedFailures.begin());
}

// The outcome every rank agrees on from every rank's code (and, for messages, value): the failure of
// the lowest failing rank, described with this rank's own detail when it is that rank.
std::optional<StepFailure> agreed_failure(const std::vector<double>& codes, const std::vector<double>& values,
                                          const std::optional<StepFailure>& local, int rank, const std::string& where) {
  const int world = static_cast<int>(codes.size());
  for (int k = 0; k < world; ++k) {
    const auto code = static_cast<std::size_t>(codes[static_cast<std::size_t>(k)]);
    if (code == 0) continue;
    const std::string of = " (rank " + std::to_string(k) + " of " + std::to_string(world) + ")";
    if (k == rank && local) return StepFailure{local->failure_class, local->detail + of};
    const std::string failure_class = code < kAgreedFailures.size() ? kAgreedFailures[code] : "failure";
    std::string detail = failure_class + " on rank " + std::to_string(k) + " of " + std::to_string(world) + " " + where;
    if (failure_class == "nan-loss") detail += ": training loss " + std::to_string(values[static_cast<std::size_t>(k)]);
    return StepFailure{failure_class, detail};
  }
  return std::nullopt;
}

// Every rank starts from rank 0's parameters (as DDP does) at the same step; a rank that found
// another checkpoint (or none) means the checkpoint folder is not shared.
void synchronize_start(DistributedContext& dist, torch::nn::Module& model, std::int64_t step) {
  const auto steps = dist.all_reduce_sum(rank_slots(dist.world_size(), dist.rank(), static_cast<double>(step)));
  for (int k = 1; k < dist.world_size(); ++k) {
    if (steps[static_cast<std::size_t>(k)] != steps[0]) {
      throw std::runtime_error("trainer: rank " + std::to_string(k) + " resumes at step " +
                               std::to_string(static_cast<std::int64_t>(steps[static_cast<std::size_t>(k)])) +
                               " but rank 0 at step " + std::to_string(static_cast<std::int64_t>(steps[0])) +
                               ": checkpoint_dir must be one folder every rank sees (shared storage)");
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.parameters()) {
    auto data = parameter.data();
    dist.broadcast_from_root(data);
  }
}

// Sum of every rank's gradients divided by the world size: the gradient of the global batch's mean
// loss, since every rank's loss is the mean over the same number of tokens. One collective.
void all_reduce_gradients(DistributedContext& dist, torch::nn::Module& model) {
  std::vector<torch::Tensor> grads;  // the same set on every rank: same model, same code path
  for (const auto& parameter : model.parameters()) {
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  }
  if (grads.empty()) return;
  std::vector<torch::Tensor> flat;
  flat.reserve(grads.size());
  for (const auto& g : grads) flat.push_back(g.reshape({-1}).to(torch::kFloat32));
  auto buffer = torch::cat(flat);  // (total gradient elements,) float32
  dist.all_reduce_sum(buffer);
  buffer.div_(static_cast<double>(dist.world_size()));
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(buffer.narrow(0, offset, g.numel()).view_as(g));
    offset += g.numel();
  }
}

}  // namespace

void TrainerConfig::validate() const {
  model.validate();
  require(token_budget > 0, "token_budget", "must be positive");
  require(batch_tokens > 0, "batch_tokens", "must be positive");
  require(sequence_length > 0, "sequence_length", "must be positive");
  require(batch_tokens % sequence_length == 0, "batch_tokens",
          "must be whole sequences: a multiple of sequence_length (" + std::to_string(sequence_length) + ")");
  require(token_budget % batch_tokens == 0, "token_budget",
          "must be a whole number of steps: a multiple of batch_tokens (" + std::to_string(batch_tokens) + ")");
  require(eval_interval_tokens > 0 && eval_interval_tokens % batch_tokens == 0, "eval_interval_tokens",
          "must be a positive multiple of batch_tokens (" + std::to_string(batch_tokens) + ")");
  require(token_budget % eval_interval_tokens == 0, "token_budget",
          "must be a multiple of eval_interval_tokens so the last evaluation falls exactly on the budget");
  require(validation_tokens > 0 && validation_tokens % sequence_length == 0, "validation_tokens",
          "must be a positive multiple of sequence_length");
  require(rows_per_step() % world_size() == 0, "batch_tokens",
          "gives " + std::to_string(rows_per_step()) + " rows per step, which do not split evenly across " +
              std::to_string(world_size()) + " data-parallel ranks: use a world size that divides " +
              std::to_string(rows_per_step()));
  require(micro_batch_rows >= 0, "micro_batch_rows", "must be >= 0 (0: automatic)");
  require(micro_batch_rows == 0 || rows_per_rank() % micro_batch_rows == 0, "micro_batch_rows",
          "must divide the rows per step" + std::string(world_size() > 1 ? " of each rank" : "") + " (" +
              std::to_string(rows_per_rank()) + ")");
  require(grad_clip >= 0, "grad_clip", "must be >= 0");
  require(safety_timeout_seconds > 0, "safety_timeout_seconds", "must be positive");
  require(spikes.window >= 1 && spikes.factor > 1.0, "spikes", "needs window >= 1 and factor > 1");
}

int TrainerConfig::world_size() const { return distributed ? distributed->world_size() : 1; }

std::int64_t TrainerConfig::resolved_micro_batch_rows() const {
  if (micro_batch_rows > 0) return micro_batch_rows;
  std::int64_t rows = std::max<std::int64_t>(1, kAutoMicroBatchTokens / sequence_length);
  rows = std::min(rows, rows_per_rank());
  while (rows_per_rank() % rows != 0) --rows;
  return rows;
}

nlohmann::json TrainerConfig::to_json() const {
  nlohmann::json model_json = model;
  return {{"model", model_json},
          {"init_seed", init_seed},
          {"order_seed", order_seed},
          {"token_budget", token_budget},
          {"batch_tokens", batch_tokens},
          {"sequence_length", sequence_length},
          {"eval_interval_tokens", eval_interval_tokens},
          {"validation_tokens", validation_tokens},
          {"micro_batch_rows", resolved_micro_batch_rows()},
          {"optimizer", optimizer.to_json()},
          {"grad_clip", grad_clip},
          {"loss_spikes", {{"window", spikes.window}, {"factor", spikes.factor}}}};
}

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
  return {{"elapsed_seconds", state.elapsed_seconds},
          {"train_seconds", state.train_seconds},
          {"eval_seconds", state.eval_seconds},
          {"train_tokens_per_s", state.train_seconds > 0 ? static_cast<double>(state.tokens) / state.train_seconds : 0.0},
          {"peak_training_bytes", state.peak_training_bytes ? nlohmann::json(*state.peak_training_bytes) : nlohmann::json(nullptr)},
          {"resumed_from_step", resumed_from_step ? nlohmann::json(*resumed_from_step) : nlohmann::json(nullptr)},
          {"threads", threads},
          {"device", device},
          {"world_size", world_size},
          {"backend", backend}};
}

double validation_loss(models::DecoderLM& model, const Dataset& data, std::int64_t sequence_length,
                       std::int64_t tokens, std::int64_t micro_batch_rows, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const std::int64_t rows = tokens / sequence_length;
  double total = 0.0;
  for (std::int64_t first = 0; first < rows; first += micro_batch_rows) {
    const std::int64_t n = std::min(micro_batch_rows, rows - first);
    const auto batch = validation_batch(data.validation, sequence_length, first, n, data.vocab_size);
    const auto inputs = to_tensor(batch.inputs, n, sequence_length, device);
    const auto targets = to_tensor(batch.targets, n, sequence_length, device);
    const auto logits = model->forward(inputs);  // (n, T, V)
    const auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    total += loss.item<double>();
  }
  return total / static_cast<double>(rows * sequence_length);
}

TrainResult train(const TrainerConfig& config, const Dataset& data, const TrainerHooks& hooks) {
  config.validate();
  if (data.vocab_size != config.model.vocab_size) {
    throw std::invalid_argument("trainer: dataset vocab_size " + std::to_string(data.vocab_size) +
                                " differs from model.vocab_size " + std::to_string(config.model.vocab_size));
  }
  DistributedContext* dist = config.world_size() > 1 ? config.distributed : nullptr;
  const int world = config.world_size();
  const int rank = dist ? dist->rank() : 0;
  const bool root = rank == 0;
  if (config.threads > 0) torch::set_num_threads(config.threads);
  torch::Device device = resolve_device(config.device);
  if (dist) {
    if (device.type() != dist->device().type()) {
      throw std::invalid_argument("trainer: device " + device.str() + " differs from the data-parallel group's " +
                                  dist->device().str() + "; join the group for the training device");
    }
    device = dist->device();
  }
  torch::manual_seed(config.init_seed);

  TrainResult result;
  result.threads = torch::get_num_threads();
  result.device = device.str();
  result.world_size = world;
  result.backend = dist ? dist->backend() : "none";
  result.model = models::DecoderLM(config.model, config.init_seed);
  auto& model = result.model;
  model->to(device);
  result.parameters = models::parameter_count(*model);
  auto optimizer = make_optimizer(config.optimizer, *model);

  const std::string config_sha = core::sha256_hex(config.to_json().dump());
  TrainerState& state = result.state;
  state.config_sha256 = config_sha;
  if (!config.checkpoint_dir.empty()) {
    if (auto loaded = load_checkpoint(config.checkpoint_dir, *model, *optimizer, config_sha)) {
      state = std::move(*loaded);
      result.resumed_from_step = state.step;
    }
  }

  const WindowOrder order(data.train.size(), config.sequence_length, config.order_seed);
  const std::int64_t total_steps = config.total_steps();
  const std::int64_t rows = config.rows_per_step();
  const std::int64_t local_rows = config.rows_per_rank();
  const std::int64_t micro = config.resolved_micro_batch_rows();
  const std::int64_t T = config.sequence_length;
  const std::int64_t steps_per_eval = config.eval_interval_tokens / config.batch_tokens;
  const double elapsed_before = state.elapsed_seconds;
  const auto attempt_start = Clock::now();
  std::optional<std::int64_t> checkpoint_step = result.resumed_from_step;
  auto checkpoint = [&] {
    state.elapsed_seconds = elapsed_before + seconds_since(attempt_start);
    if (config.checkpoint_dir.empty()) return;
    if (root) save_checkpoint(config.checkpoint_dir, *model, *optimizer, state);
    checkpoint_step = state.step;
  };
  auto fail = [&](const StepFailure& failure) {
    state.elapsed_seconds = elapsed_before + seconds_since(attempt_start);
    result.status = TrainResult::Status::Failed;
    result.failure_class = failure.failure_class;
    result.detail = failure.detail;
    return result;
  };

  try {
    if (dist) synchronize_start(*dist, *model, state.step);
    reset_peak_memory(device);
    model->train();
    while (state.step < total_steps) {
      // Stop conditions are agreed, so that every rank ends at the same step.
      bool stop = hooks.stop_requested && hooks.stop_requested->load();
      bool timed_out = elapsed_before + seconds_since(attempt_start) > config.safety_timeout_seconds;
      if (dist) {
        const auto any = dist->all_reduce_sum({stop ? 1.0 : 0.0, timed_out ? 1.0 : 0.0});
        stop = any[0] > 0;
        timed_out = any[1] > 0;
      }
      if (stop) {
        checkpoint();
        result.status = TrainResult::Status::Interrupted;
        result.detail = "stopped on request at step " + std::to_string(state.step) + "; the checkpoint resumes it";
        return result;
      }
      if (timed_out) {
        checkpoint();
        result.status = TrainResult::Status::TimedOut;
        result.detail = "safety timeout of " + std::to_string(config.safety_timeout_seconds / 3600.0) + " h reached after " +
                        std::to_string(state.tokens) + " of " + std::to_string(config.token_budget) +
                        " tokens; the run is incomplete and its partial checkpoint is not a comparison";
        return result;
      }

      const auto step_start = Clock::now();
      std::optional<StepFailure> failure;
      double step_loss = 0.0;     // mean over this rank's rows
      double failed_value = 0.0;  // the non-finite loss, for the peers' message
      try {
        set_learning_rate(*optimizer, scheduled_learning_rate(config.optimizer, state.step, total_steps));
        optimizer->zero_grad();
        for (std::int64_t first = 0; first < local_rows && !failure; first += micro) {
          const auto batch = training_batch(data.train, order, state.step * rows + rank * local_rows + first, micro,
                                            data.vocab_size);
          const auto inputs = to_tensor(batch.inputs, micro, T, device);
          const auto targets = to_tensor(batch.targets, micro, T, device);
          const auto logits = model->forward(inputs);  // (micro, T, V)
          auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                                           targets.reshape({-1}));
          if (hooks.transform_loss) loss = hooks.transform_loss(state.step, loss);
          const double value = loss.item<double>();
          if (!std::isfinite(value)) {
            failed_value = value;
            failure = StepFailure{"nan-loss", "training loss is " + std::to_string(value) + " at step " +
                                                  std::to_string(state.step) + " (tokens " + std::to_string(state.tokens) + ")"};
            break;
          }
          step_loss += value * static_cast<double>(micro) / static_cast<double>(local_rows);
          (loss * (static_cast<double>(micro) / static_cast<double>(local_rows))).backward();
        }
      } catch (const std::exception& e) {
        if (!is_out_of_memory(e)) throw;
        failure = StepFailure{"oom", std::string("out of memory at step ") + std::to_string(state.step) + ": " + e.what()};
      }
      if (dist) {
        // [status code per rank | loss per rank]: all stop on any rank's failure; the loss is the global mean.
        auto outcome = rank_slots(2 * world, rank, failure_code(failure));
        outcome[static_cast<std::size_t>(world + rank)] = failure ? failed_value : step_loss;
        outcome = dist->all_reduce_sum(outcome);
        const std::vector<double> codes(outcome.begin(), outcome.begin() + world);
        const std::vector<double> losses(outcome.begin() + world, outcome.end());
        failure = agreed_failure(codes, losses, failure, rank, "at step " + std::to_string(state.step));
        step_loss = 0.0;
        for (double loss : losses) step_loss += loss;
        step_loss /= static_cast<double>(world);
      }
      if (!failure) {
        try {
          if (dist) all_reduce_gradients(*dist, *model);
          double grad_norm = 0.0;
          if (config.grad_clip > 0) {
            grad_norm = torch::nn::utils::clip_grad_norm_(model->parameters(), config.grad_clip);
          } else {
            for (const auto& p : model->parameters()) {
              if (p.grad().defined()) grad_norm += p.grad().to(torch::kFloat64).pow(2).sum().item<double>();
            }
            grad_norm = std::sqrt(grad_norm);
          }
          // After the all-reduce every rank holds the same gradients, so this verdict is common.
          if (!std::isfinite(grad_norm)) {
            failure = StepFailure{"non-finite-gradient", "gradient norm is " + std::to_string(grad_norm) + " at step " +
                                                             std::to_string(state.step)};
          } else {
            optimizer->step();
          }
        } catch (const RankFailure&) {
          throw;
        } catch (const std::exception& e) {
          if (!is_out_of_memory(e)) throw;
          failure = StepFailure{"oom", std::string("out of memory at step ") + std::to_string(state.step) + ": " + e.what()};
        }
      }
      if (failure) return fail(*failure);
      state.train_seconds += seconds_since(step_start);
      if (static_cast<std::int64_t>(state.losses.size()) >= config.spikes.window) {
        const double median = median_of_last(state.losses, config.spikes.window);
        if (step_loss > config.spikes.factor * median) {
          state.loss_spikes.push_back({{"step", state.step}, {"tokens", state.tokens}, {"loss", step_loss}, {"median", median}});
        }
      }
      state.losses.push_back(step_loss);
      state.step += 1;
      state.tokens += config.batch_tokens;
      if (const auto peak = peak_memory_bytes(device)) {
        state.peak_training_bytes = std::max(state.peak_training_bytes.value_or(0), *peak);
      }

      if (state.step % steps_per_eval == 0) {
        const auto eval_start = Clock::now();
        model->eval();
        nlohmann::json record = {{"step", state.step}, {"tokens", state.tokens}};
        std::optional<StepFailure> eval_failure;
        try {
          record["validation_loss"] = validation_loss(model, data, T, config.validation_tokens, micro, device);
          if (hooks.evaluate) {
            EvalContext context{model, device, state.tokens, state.step, state.step == total_steps};
            record["probes"] = hooks.evaluate(context);
          }
        } catch (const std::exception& e) {
          if (!is_out_of_memory(e)) throw;
          eval_failure = StepFailure{"oom", std::string("out of memory in the evaluation at step ") +
                                                std::to_string(state.step) + ": " + e.what()};
        }
        if (dist) {
          const auto codes = dist->all_reduce_sum(rank_slots(world, rank, failure_code(eval_failure)));
          eval_failure = agreed_failure(codes, codes, eval_failure, rank,
                                        "in the evaluation at step " + std::to_string(state.step));
        }
        if (eval_failure) return fail(*eval_failure);
        model->train();
        state.evaluations.push_back(record);
        state.eval_seconds += seconds_since(eval_start);
        reset_peak_memory(device);  // training peaks exclude the evaluation's
        checkpoint();
        if (hooks.on_evaluation && root) hooks.on_evaluation(record);
      }
      if (hooks.progress && root) hooks.progress(static_cast<double>(state.step) / static_cast<double>(total_steps));
      if (hooks.crash_after_step && hooks.crash_after_step(state.step)) {
        result.status = TrainResult::Status::Interrupted;
        result.detail = "simulated kill after step " + std::to_string(state.step);
        return result;
      }
    }
  } catch (const RankFailure& e) {
    const std::string resume =
        config.checkpoint_dir.empty() ? "this run keeps no checkpoints, so a rerun starts from step 0"
        : checkpoint_step ? "the checkpoint at step " + std::to_string(*checkpoint_step) + " resumes it: run the same command again"
                          : "no checkpoint was written yet, so a rerun starts from step 0";
    return fail({"rank-failure", std::string(e.what()) + " at step " + std::to_string(state.step) + "; " + resume});
  }
  state.elapsed_seconds = elapsed_before + seconds_since(attempt_start);
  result.status = TrainResult::Status::Completed;
  return result;
}

}  // namespace k3lab::train
