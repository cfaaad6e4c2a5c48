#pragma once
// The protocol's peak_stored_residual_memory_bytes, from the residual mode (reference/mechanisms.md
// section 1.7, "residual bank"). The residual path keeps, per token, the depth sources it aggregates;
// their count peaks at the final aggregation of a forward pass:
//   standard:        1           the one accumulated representation h
//   full_attn_res:   2L + 1      the embedding and every sublayer output (attention and MLP apart)
//   block_attn_res:  ceil(L/S)+1 the embedding and every block sum, the last one partial
// (L decoder layers, S decoder layers per block). The bytes are
//   sources x d_model x dtype bytes x tokens of one training micro-batch (rows x sequence_length),
// i.e. what one forward of a micro-batch holds for aggregation. Activations autograd keeps for the
// backward pass (every arm's norms and sublayers) are not part of it; the CUDA allocator's peak
// training bytes, recorded beside it, covers everything.
// Torch-free.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "k3lab/models/model_config.hpp"

namespace k3lab::experiments::attn_res {

std::int64_t stored_residual_sources(models::ResidualMode mode, std::int64_t n_layers, std::int64_t block_layers);

struct ResidualMemory {
  std::int64_t sources = 0;
  std::int64_t d_model = 0;
  std::int64_t dtype_bytes = 0;
  std::int64_t tokens = 0;  // of one training micro-batch on one rank
  std::int64_t bytes() const { return sources * d_model * dtype_bytes * tokens; }
  nlohmann::json to_json() const;
};

ResidualMemory stored_residual_memory(const models::ModelConfig& model, std::int64_t dtype_bytes,
                                      std::int64_t micro_batch_tokens);

}  // namespace k3lab::experiments::attn_res
