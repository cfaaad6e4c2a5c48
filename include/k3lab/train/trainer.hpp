#pragma once
// The language-model entry point of the shared trainer (task_trainer.hpp): a models::DecoderLM built
// from config.model and trained on next-token cross-entropy, evaluated by validation loss plus the
// caller's probes. hybrid-attention, attn-res, situ-qat and per-head-muon train through it; a task
// with another model or loss calls train_task directly (router-balance).
#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/models/model_config.hpp"
#include "k3lab/train/task_trainer.hpp"

namespace k3lab::train {

struct TrainerConfig : LoopConfig {
  models::ModelConfig model;
  std::uint64_t init_seed = 0;
  std::int64_t validation_tokens = 0;  // evaluated at every evaluation point (whole windows)

  // LoopConfig::validate plus the model and the validation size.
  void validate() const;
  // LoopConfig::to_json plus model, init_seed and validation_tokens (the task's identity).
  nlohmann::json to_json() const;
};

struct EvalContext {
  models::DecoderLM& model;
  const torch::Device& device;
  std::int64_t tokens = 0;  // training tokens seen
  std::int64_t step = 0;
  bool final = false;       // the evaluation at the token budget
};

struct TrainerHooks : LoopHooks {
  // Extra evaluation at every checkpoint (long-context probes...); its JSON is stored under "probes".
  // Data parallel: runs on every rank.
  std::function<nlohmann::json(EvalContext&)> evaluate;
};

struct LmTrainResult : TrainResult {
  models::DecoderLM model{nullptr};  // the model at the end (for final probes)
};

// The DecoderLM + cross-entropy task: validation loss and the hooks' probes at each evaluation.
class DecoderLmTask : public TrainingTask {
 public:
  // Builds the model from config.model and config.init_seed (after seeding LibTorch's generator with
  // init_seed, as every run of this task does). `data` and `evaluate` must outlive the task.
  DecoderLmTask(const TrainerConfig& config, const Dataset& data,
                std::function<nlohmann::json(EvalContext&)> evaluate = {});

  torch::nn::Module& model() override { return *model_; }
  nlohmann::json identity() const override;
  TaskLoss loss(const Batch& batch) override;
  // The decoder's forward and the next-token loss change no state.
  bool loss_is_reentrant() const override { return true; }
  nlohmann::json evaluate(const EvalPoint& point) override;
  const models::DecoderLM& decoder() const { return model_; }

 private:
  models::ModelConfig config_;
  std::uint64_t init_seed_;
  std::int64_t validation_tokens_;
  std::int64_t sequence_length_;
  const Dataset& data_;
  std::function<nlohmann::json(EvalContext&)> probes_;
  models::DecoderLM model_{nullptr};
};

LmTrainResult train(const TrainerConfig& config, const Dataset& data, const TrainerHooks& hooks = {});

// Mean next-token loss over the first `tokens` validation tokens (whole windows of sequence_length).
double validation_loss(models::DecoderLM& model, const Dataset& data, std::int64_t sequence_length,
                       std::int64_t tokens, std::int64_t micro_batch_rows, const torch::Device& device);

}  // namespace k3lab::train
