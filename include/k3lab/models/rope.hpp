#pragma once
// Rotary position embedding (half-split pairing, as in LLaMA) for the full-attention baseline.
// Kimi's MLA is NoPE and never uses this.
#include <torch/types.h>

#include <cstdint>

namespace k3lab::models {

// x (B, H, T, d) with d even; token t sits at absolute position start + t.
torch::Tensor apply_rope(const torch::Tensor& x, std::int64_t start, double theta);

}  // namespace k3lab::models
