#include "k3lab/sim/model_sizes.hpp"

#include <algorithm>
#include <stdexcept>

namespace k3lab::sim {

void HybridModelConfig::validate() const {
  auto require = [&](bool ok, const char* field, const std::string& what) {
    if (!ok) throw std::invalid_argument("model." + std::string(field) + ": " + what);
  };
  require(kda_layers > 0, "kda_layers", "must be at least 1");
  require(mla_layers > 0, "mla_layers", "must be at least 1");
  require(kda_heads > 0, "kda_heads", "must be at least 1");
  require(kda_head_dim > 0, "kda_head_dim", "must be at least 1");
  require(kda_conv_kernel >= 1, "kda_conv_kernel", "must be at least 1");
  require(tensor_parallel > 0, "tensor_parallel", "must be at least 1");
  require(kda_heads % tensor_parallel == 0, "tensor_parallel",
          "must divide kda_heads (" + std::to_string(kda_heads) + ") so that heads shard evenly");
  require(kv_lora_rank > 0, "kv_lora_rank", "must be at least 1");
  require(state_slots_per_request > 0, "state_slots_per_request", "must be at least 1");
}

Bytes HybridModelConfig::kda_state_bytes_per_layer() const {
  const Bytes heads = kda_heads / tensor_parallel;
  const Bytes d = kda_head_dim;
  const Bytes temporal = heads * d * d * ssm_state_bytes_per_element;
  const Bytes conv = static_cast<Bytes>(kda_conv_kernel - 1) * 3 * heads * d * conv_state_bytes_per_element;
  return temporal + conv;
}

Bytes HybridModelConfig::state_bytes_per_request() const {
  return kda_state_bytes_per_layer() * kda_layers * state_slots_per_request;
}

Bytes HybridModelConfig::mla_bytes_per_token_per_layer() const {
  return static_cast<Bytes>(kv_lora_rank + qk_rope_head_dim) * kv_bytes_per_element;
}

Bytes HybridModelConfig::mla_bytes_per_token() const { return mla_bytes_per_token_per_layer() * mla_layers; }

PaddedLayout padded_layout(const HybridModelConfig& model, std::uint32_t block_align_tokens) {
  if (block_align_tokens == 0) throw std::invalid_argument("block_align_tokens must be at least 1");
  PaddedLayout layout;
  const Bytes row = model.mla_bytes_per_token_per_layer();
  const Bytes state = model.kda_state_bytes_per_layer() * model.state_slots_per_request;
  const Bytes min_tokens = (state + row - 1) / row;
  layout.block_tokens = static_cast<std::uint32_t>((min_tokens + block_align_tokens - 1) / block_align_tokens *
                                                   block_align_tokens);
  layout.layer_page_bytes = std::max<Bytes>(static_cast<Bytes>(layout.block_tokens) * row, state);
  layout.group_layers = std::min(model.kda_layers, model.mla_layers);
  layout.state_groups = (model.kda_layers + layout.group_layers - 1) / layout.group_layers;
  layout.kv_groups = (model.mla_layers + layout.group_layers - 1) / layout.group_layers;
  layout.block_bytes = static_cast<Bytes>(layout.group_layers) * layout.layer_page_bytes;
  return layout;
}

}  // namespace k3lab::sim
