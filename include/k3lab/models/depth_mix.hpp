#pragma once
// Attention Residuals' depth attention for one consumer, with O(sources) stored memory.
//
//   k_i = rms_normalize(s_i) * gain          (N sources s_i, each (B, T, D))
//   w   = softmax_i(<k_i, query>)            (N, B, T)
//   out = sum_i w_i s_i                      (B, T, D)
//
// Written with autograd ops, every consumer's stacked (N, B, T, D) copy of its sources would be kept
// for backward: O(depth^2) memory over a Full AttnRes network (about 43 GB per 2,000-token row at the
// full attn-res shape). This function keeps only references to the sources themselves (which the
// network holds anyway) and recomputes the softmax in backward, so stored memory grows linearly with
// depth. Outputs are bitwise those of the autograd form; gradients agree to rounding (float64 tests).
#include <vector>

#include <torch/types.h>

namespace k3lab::models {

// sources: N >= 1 tensors (B, T, D) of one dtype; query, gain: (D). Softmax and norms in float32
// (float64 for float64 inputs); the output has the sources' dtype.
torch::Tensor depth_mix(const std::vector<torch::Tensor>& sources, const torch::Tensor& query,
                        const torch::Tensor& gain, double eps);

// The same computation with plain autograd ops (the reference the tests compare against).
torch::Tensor depth_mix_reference(const std::vector<torch::Tensor>& sources, const torch::Tensor& query,
                                  const torch::Tensor& gain, double eps);

}  // namespace k3lab::models
