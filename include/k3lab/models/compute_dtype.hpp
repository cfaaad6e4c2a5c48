#pragma once
// The dtype that norms, softmaxes and quantisation arithmetic run in: float64 stays float64, every
// other floating type (float32, bf16, fp16) computes in float32.
#include <torch/types.h>

namespace k3lab::models {

inline torch::ScalarType compute_dtype(const torch::Tensor& x) {
  return x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
}

}  // namespace k3lab::models
