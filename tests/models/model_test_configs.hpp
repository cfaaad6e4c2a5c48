#pragma once
// Small model configurations shared by the model-level tests.
#include <k3lab/models/model_config.hpp>

namespace k3lab::models::testing {

inline ModelConfig tiny_config(const std::string& schedule) {
  ModelConfig c;
  c.vocab_size = 50;
  c.hidden_size = 32;
  c.schedule = schedule;
  c.kda.num_heads = 2;
  c.kda.head_dim = 16;
  c.kda.chunk_size = 16;
  c.mla.num_heads = 2;
  c.mla.kv_lora_rank = 16;
  c.mla.qk_nope_head_dim = 8;
  c.mla.qk_rope_head_dim = 4;
  c.mla.v_head_dim = 8;
  c.attention.num_heads = 2;
  c.attention.head_dim = 16;
  c.ffn.intermediate_size = 64;
  return c;
}

}  // namespace k3lab::models::testing
