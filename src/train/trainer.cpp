#include "k3lab/train/thread_pools.hpp"
#include "k3lab/train/trainer.hpp"

#include <algorithm>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/train/data_order.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/micro_batch_lanes.hpp"

namespace k3lab::train {

void TrainerConfig::validate() const {
  model.validate();
  LoopConfig::validate();
  if (!(validation_tokens > 0 && validation_tokens % sequence_length == 0)) {
    throw std::invalid_argument("trainer: validation_tokens must be a positive multiple of sequence_length");
  }
}

nlohmann::json TrainerConfig::to_json() const {
  auto j = LoopConfig::to_json();
  j["model"] = model;
  j["init_seed"] = init_seed;
  j["validation_tokens"] = validation_tokens;
  return j;
}

DecoderLmTask::DecoderLmTask(const TrainerConfig& config, const Dataset& data,
                             std::function<nlohmann::json(EvalContext&)> evaluate)
    : config_(config.model),
      init_seed_(config.init_seed),
      validation_tokens_(config.validation_tokens),
      sequence_length_(config.sequence_length),
      data_(data),
      probes_(std::move(evaluate)) {
  torch::manual_seed(init_seed_);
  model_ = models::DecoderLM(config_, init_seed_);
}

nlohmann::json DecoderLmTask::identity() const {
  nlohmann::json model = config_;
  return {{"model", model}, {"init_seed", init_seed_}, {"validation_tokens", validation_tokens_}};
}

TaskLoss DecoderLmTask::loss(const Batch& batch) {
  const auto logits = model_->forward(batch.inputs);  // (micro, T, V)
  return {next_token_loss(logits, batch.targets), {}, nullptr};
}

nlohmann::json DecoderLmTask::evaluate(const EvalPoint& point) {
  nlohmann::json fields = {
      {"validation_loss",
       validation_loss(model_, data_, sequence_length_, validation_tokens_, point.micro_batch_rows, point.device)}};
  if (probes_) {
    EvalContext context{model_, point.device, point.tokens, point.step, point.final};
    fields["probes"] = probes_(context);
  }
  return fields;
}

LmTrainResult train(const TrainerConfig& config, const Dataset& data, const TrainerHooks& hooks) {
  config.validate();
  if (data.vocab_size != config.model.vocab_size) {
    throw std::invalid_argument("trainer: dataset vocab_size " + std::to_string(data.vocab_size) +
                                " differs from model.vocab_size " + std::to_string(config.model.vocab_size));
  }
  // Threads first: the model is built (and initialised) with the thread count it trains with.
  apply_thread_policy(core::choose_thread_policy(config.threads));
  DecoderLmTask task(config, data, hooks.evaluate);
  LmTrainResult result;
  static_cast<TrainResult&>(result) = train_task(task, config, data, hooks);
  result.model = task.decoder();
  return result;
}

double validation_loss(models::DecoderLM& model, const Dataset& data, std::int64_t sequence_length,
                       std::int64_t tokens, std::int64_t micro_batch_rows, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  const std::int64_t rows = tokens / sequence_length;
  const std::int64_t batches = (rows + micro_batch_rows - 1) / micro_batch_rows;
  std::vector<double> sums(static_cast<std::size_t>(batches), 0.0);
  // Micro-batches side by side on the CPU (the decoder's forward is reentrant), summed in order.
  const int threads = at::get_num_threads();
  run_side_by_side(micro_batch_lanes(threads, batches, device), threads, batches, [&](std::int64_t b) {
    const std::int64_t first = b * micro_batch_rows;
    const std::int64_t n = std::min(micro_batch_rows, rows - first);
    const auto batch = validation_batch(data.validation, sequence_length, first, n, data.vocab_size);
    const auto inputs = token_tensor(batch.inputs, n, sequence_length, device);
    const auto targets = token_tensor(batch.targets, n, sequence_length, device);
    const auto logits = model->forward(inputs);  // (n, T, V)
    const auto loss = torch::nn::functional::cross_entropy(
        logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32), targets.reshape({-1}),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
    sums[static_cast<std::size_t>(b)] = loss.item<double>();
  });
  double total = 0.0;
  for (double sum : sums) total += sum;
  return total / static_cast<double>(rows * sequence_length);
}

}  // namespace k3lab::train
