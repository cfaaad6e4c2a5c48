#pragma once
// Memory sizes of a KDA/MLA hybrid, derived from its config the way SGLang and vLLM size their
// pools (reference/memsim.md section 3.2). Everything here is arithmetic on protocol fields.
#include <cstdint>
#include <string>

#include "k3lab/sim/pool_types.hpp"

namespace k3lab::sim {

struct HybridModelConfig {
  std::string name;
  std::uint32_t kda_layers = 0;
  std::uint32_t mla_layers = 0;
  std::uint32_t kda_heads = 0;
  std::uint32_t kda_head_dim = 0;
  std::uint32_t kda_conv_kernel = 0;
  std::uint32_t tensor_parallel = 1;          // KDA state is sharded by heads; the MLA latent is not
  std::uint32_t ssm_state_bytes_per_element = 4;   // fp32 recurrent state (forced in both engines)
  std::uint32_t conv_state_bytes_per_element = 2;  // bf16 short-conv windows
  std::uint32_t kv_lora_rank = 0;
  std::uint32_t qk_rope_head_dim = 0;
  std::uint32_t kv_bytes_per_element = 2;
  std::uint32_t state_slots_per_request = 1;  // >1 for speculative/prefix-cache extra states

  // temporal (H/tp, d, d) + conv (K-1, 3*H*d/tp), per KDA layer, per request.
  Bytes kda_state_bytes_per_layer() const;
  Bytes state_bytes_per_request() const;  // all KDA layers, times state_slots_per_request
  Bytes mla_bytes_per_token_per_layer() const;
  Bytes mla_bytes_per_token() const;      // all MLA layers

  // Throws std::invalid_argument naming the field when the config cannot describe a model.
  void validate() const;
};

// vLLM's geometry for the padded single-page-size pool (memsim.md section 2.1).
struct PaddedLayout {
  std::uint32_t block_tokens = 0;   // smallest multiple of align with block_tokens * row >= per-layer state
  Bytes layer_page_bytes = 0;       // max(block_tokens * row, per-layer state)
  std::uint32_t group_layers = 0;   // layers per KV cache group (min of the two layer counts)
  std::uint32_t state_groups = 0;   // ceil(kda_layers / group_layers): state blocks per request
  std::uint32_t kv_groups = 0;      // ceil(mla_layers / group_layers): blocks per block_tokens of KV
  Bytes block_bytes = 0;            // group_layers * layer_page_bytes
};
PaddedLayout padded_layout(const HybridModelConfig& model, std::uint32_t block_align_tokens);

}  // namespace k3lab::sim
