#pragma once
// The tiny hybrid model, trainer configuration and built-in corpus that the trainer and checkpoint
// tests train on (a few seconds on one CPU thread).
#include <string>

#include "k3lab/train/dataset.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::train::testing {

inline models::ModelConfig tiny_model(const std::string& schedule = "KKKM") {
  models::ModelConfig c;
  c.vocab_size = 256;
  c.hidden_size = 16;
  c.schedule = schedule;
  c.kda.num_heads = 2;
  c.kda.head_dim = 8;
  c.kda.chunk_size = 16;
  c.mla.num_heads = 2;
  c.mla.kv_lora_rank = 8;
  c.mla.qk_nope_head_dim = 8;
  c.mla.qk_rope_head_dim = 4;
  c.mla.v_head_dim = 8;
  c.ffn.intermediate_size = 32;
  return c;
}

inline TrainerConfig tiny_config() {
  TrainerConfig c;
  c.model = tiny_model();
  c.init_seed = 11;
  c.order_seed = 3001;
  c.token_budget = 128;
  c.batch_tokens = 32;
  c.sequence_length = 16;
  c.eval_interval_tokens = 64;
  c.validation_tokens = 32;
  c.micro_batch_rows = 1;  // exercises gradient accumulation
  c.optimizer.learning_rate = 3e-3;
  c.optimizer.warmup_fraction = 0.25;
  c.device = "cpu";
  c.threads = 1;
  return c;
}

inline const Dataset& corpus() {
  static const Dataset d = load_dataset({"builtin-tiny", "bytes", 256, "unused"});
  return d;
}

}  // namespace k3lab::train::testing
