#include <k3lab/models/memory_accounting.hpp>

namespace k3lab::models {

std::int64_t kda_state_bytes_per_layer(const KdaConfig& kda, std::int64_t bytes_per_element) {
  return kda.num_heads * kda.head_dim * kda.head_dim * bytes_per_element;  // H x K x V
}

std::int64_t kda_conv_bytes_per_layer(const KdaConfig& kda, std::int64_t bytes_per_element) {
  return 3 * (kda.conv_kernel - 1) * kda.num_heads * kda.head_dim * bytes_per_element;  // q, k, v windows
}

std::int64_t mla_cache_bytes_per_token(const MlaConfig& mla, std::int64_t bytes_per_element) {
  return (mla.kv_lora_rank + mla.qk_rope_head_dim) * bytes_per_element;
}

std::int64_t attention_cache_bytes_per_token(const AttentionConfig& attention, std::int64_t bytes_per_element) {
  return 2 * attention.num_heads * attention.head_dim * bytes_per_element;  // K and V
}

InferenceMemory inference_memory(const ModelConfig& config, const MemoryPrecision& precision) {
  const auto counts = count_mixers(config.schedule);
  InferenceMemory m;
  m.recurrent_state_bytes = counts.kda * kda_state_bytes_per_layer(config.kda, precision.state_bytes);
  m.conv_state_bytes = counts.kda * kda_conv_bytes_per_layer(config.kda, precision.conv_bytes);
  m.kv_bytes_per_token = counts.mla * mla_cache_bytes_per_token(config.mla, precision.cache_bytes) +
                         counts.attention * attention_cache_bytes_per_token(config.attention, precision.cache_bytes);
  return m;
}

std::int64_t residual_sources_per_token(const ModelConfig& config) {
  const std::int64_t L = config.num_layers();
  switch (config.residual.mode) {
    case ResidualMode::Standard: return 1;
    case ResidualMode::FullAttnRes: return 2 * L + 1;
    case ResidualMode::BlockAttnRes: return (L - 1) / config.residual.block_size + 2;
  }
  return 1;
}

}  // namespace k3lab::models
