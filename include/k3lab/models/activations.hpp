#pragma once
// Gated activations for the feed-forward (reference/mechanisms.md section 3).
#include <torch/types.h>

namespace k3lab::models {

// beta * tanh(z / beta): identity near 0, bounded by beta.
torch::Tensor softcap(const torch::Tensor& z, double beta);

// SwiGLU: silu(gate) * up.
torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up);

// SiTU-GLU (Kimi K3): [b1 tanh(gate/b1) sigmoid(gate)] * [b2 tanh(up/b2)], so |y| <= b1 * b2.
// Computed in float32 (float64 for float64 inputs) and returned in gate's dtype.
torch::Tensor situ_glu(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate = 4.0,
                       double beta_up = 25.0);

}  // namespace k3lab::models
