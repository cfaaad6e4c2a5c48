#pragma once
// Inference memory per request for a ModelConfig (reference/kda.md section 5.2): KDA layers hold a
// fixed recurrent state (H x K x V per layer) plus a short-conv window ((kernel - 1) x 3 x H x K),
// MLA layers cache (kv_lora_rank + qk_rope_head_dim) values per token, full-attention layers
// 2 x H x head_dim per token. Torch-free.
#include <k3lab/models/model_config.hpp>

#include <cstdint>

namespace k3lab::models {

struct MemoryPrecision {
  std::int64_t state_bytes = 4;  // KDA recurrent state (fp32, as fla and FlashKDA keep it)
  std::int64_t conv_bytes = 2;   // short-conv window (bf16)
  std::int64_t cache_bytes = 2;  // MLA latent / attention K,V (bf16)
};

struct InferenceMemory {
  std::int64_t recurrent_state_bytes = 0;  // per request, all KDA layers
  std::int64_t conv_state_bytes = 0;       // per request, all KDA layers
  std::int64_t kv_bytes_per_token = 0;     // all MLA and attention layers
  std::int64_t fixed_bytes() const { return recurrent_state_bytes + conv_state_bytes; }
  std::int64_t per_request(std::int64_t tokens) const { return fixed_bytes() + tokens * kv_bytes_per_token; }
};

std::int64_t kda_state_bytes_per_layer(const KdaConfig& kda, std::int64_t bytes_per_element = 4);
std::int64_t kda_conv_bytes_per_layer(const KdaConfig& kda, std::int64_t bytes_per_element = 2);
std::int64_t mla_cache_bytes_per_token(const MlaConfig& mla, std::int64_t bytes_per_element = 2);
std::int64_t attention_cache_bytes_per_token(const AttentionConfig& attention,
                                             std::int64_t bytes_per_element = 2);

InferenceMemory inference_memory(const ModelConfig& config, const MemoryPrecision& precision = {});

// Hidden-size vectors the residual path holds per token at its peak (the "residual bank"):
// Standard 1; FullAttnRes 2L + 1 (embedding and every sublayer output); BlockAttnRes the sealed
// blocks plus the partial one, floor((L - 1) / block_size) + 2 (Kimi K3, 93 layers / 12: 9).
std::int64_t residual_sources_per_token(const ModelConfig& config);

}  // namespace k3lab::models
