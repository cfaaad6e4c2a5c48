#pragma once
// KDA decay gates (reference/kda.md section 1.2, fla/ops/kda/gate.py). Both map raw gate logits
// g_raw (B, T, H, K) to a log-decay g <= 0 of the same shape, computed in float32 (float64 when
// g_raw is float64). a_log has shape (H); dt_bias has shape (H * K) or (H, K).

#include <torch/types.h>

#include <optional>

namespace k3lab::models {

// Kimi K3's lower-bounded ("safe") gate:
//     g = lower_bound * sigmoid(exp(A_log[h]) * (g_raw + dt_bias[h, :]))   in (lower_bound, 0)
// Without A_log the factor exp(A_log) is 1; without dt_bias the bias is 0. This replaces the
// activation; it is not a clamp. lower_bound must be finite and < 0 (K3 uses -5).
torch::Tensor kda_gate_lower_bound(const torch::Tensor& g_raw,
                                   const std::optional<torch::Tensor>& a_log,
                                   const std::optional<torch::Tensor>& dt_bias,
                                   double lower_bound = -5.0);

// Kimi Linear's unbounded gate: g = -exp(A_log[h]) * softplus(g_raw + dt_bias[h, :]).
torch::Tensor kda_gate_softplus(const torch::Tensor& g_raw,
                                const std::optional<torch::Tensor>& a_log,
                                const std::optional<torch::Tensor>& dt_bias);

}  // namespace k3lab::models
