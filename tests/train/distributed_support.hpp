#pragma once
// The tiny data-parallel training run shared by distributed_test.cpp (the one-process reference) and
// distributed_worker.cpp (one rank of a two-process Gloo run), and how a worker reports its result.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "k3lab/train/dataset.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::train::testing {

// 4 rows of 16 tokens per step, one row per forward: one process accumulates 4 micro-batches, each
// of two ranks 2, so the all-reduce changes the float summation order. 6 steps, an evaluation (and
// checkpoint) every 2; the global-norm clip is active.
inline TrainerConfig data_parallel_config() {
  TrainerConfig c;
  c.model.vocab_size = 256;
  c.model.hidden_size = 16;
  c.model.schedule = "KKKM";
  c.model.kda.num_heads = 2;
  c.model.kda.head_dim = 8;
  c.model.kda.chunk_size = 16;
  c.model.mla.num_heads = 2;
  c.model.mla.kv_lora_rank = 8;
  c.model.mla.qk_nope_head_dim = 8;
  c.model.mla.qk_rope_head_dim = 4;
  c.model.mla.v_head_dim = 8;
  c.model.ffn.intermediate_size = 32;
  c.init_seed = 17;
  c.order_seed = 3001;
  c.batch_tokens = 64;
  c.sequence_length = 16;
  c.token_budget = 6 * 64;
  c.eval_interval_tokens = 2 * 64;
  c.validation_tokens = 32;
  c.micro_batch_rows = 1;
  c.optimizer.learning_rate = 3e-3;
  c.optimizer.warmup_fraction = 0.25;
  c.grad_clip = 0.5;
  c.device = "cpu";
  c.threads = 1;
  return c;
}

inline const Dataset& data_parallel_corpus() {
  static const Dataset d = load_dataset({"builtin-tiny", "bytes", 256, "unused"});
  return d;
}

// Every parameter, flattened in module order.
inline std::vector<double> flat_parameters(const torch::nn::Module& model) {
  std::vector<double> values;
  for (const auto& p : model.parameters()) {
    const auto flat = p.detach().to(torch::kFloat64).reshape({-1}).contiguous();
    values.insert(values.end(), flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
  }
  return values;
}

inline nlohmann::json result_json(const LmTrainResult& result) {
  return {{"status", TrainResult::to_string(result.status)},
          {"failure_class", result.failure_class},
          {"detail", result.detail},
          {"step", result.state.step},
          {"losses", result.state.losses},
          {"evaluations", result.state.evaluations},
          {"resumed_from_step", result.resumed_from_step ? nlohmann::json(*result.resumed_from_step) : nlohmann::json()},
          {"timing", result.timing_json()},
          {"parameters", flat_parameters(*result.model)}};
}

}  // namespace k3lab::train::testing
