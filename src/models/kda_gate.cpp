#include <k3lab/models/kda_gate.hpp>

#include <cmath>

#include "kda_checks.hpp"

namespace k3lab::models {

namespace {

// g_raw + dt_bias in the compute dtype. g_raw (B, T, H, K); dt_bias (H * K) or (H, K).
torch::Tensor biased_logits(const std::string& where, const torch::Tensor& g_raw,
                            const std::optional<torch::Tensor>& dt_bias) {
  detail::require_float(where, "g_raw", g_raw);
  if (g_raw.dim() != 4) detail::fail(where, "g_raw must be (B, T, H, K), got " + detail::shape_of(g_raw));
  const auto cdt = detail::compute_dtype(g_raw);
  auto x = g_raw.to(cdt);  // (B, T, H, K)
  if (dt_bias && dt_bias->defined()) {
    const std::int64_t H = g_raw.size(2), K = g_raw.size(3);
    auto bias = dt_bias->to(cdt);
    if (bias.dim() == 1 && bias.size(0) == H * K) {
      bias = bias.view({H, K});
    } else if (!(bias.dim() == 2 && bias.size(0) == H && bias.size(1) == K)) {
      detail::fail(where, "dt_bias must be (H * K) = (" + std::to_string(H * K) + ") or (H, K), got " +
                              detail::shape_of(bias));
    }
    x = x + bias;  // broadcast over (B, T)
  }
  return x;
}

// exp(A_log) as (H, 1), or nothing.
std::optional<torch::Tensor> decay_rate(const std::string& where, const torch::Tensor& g_raw,
                                        const std::optional<torch::Tensor>& a_log) {
  if (!a_log || !a_log->defined()) return std::nullopt;
  const std::int64_t H = g_raw.size(2);
  if (a_log->dim() != 1 || a_log->size(0) != H) {
    detail::fail(where, "A_log must be (H) = (" + std::to_string(H) + "), got " + detail::shape_of(*a_log));
  }
  return a_log->to(detail::compute_dtype(g_raw)).exp().view({H, 1});
}

}  // namespace

torch::Tensor kda_gate_lower_bound(const torch::Tensor& g_raw,
                                   const std::optional<torch::Tensor>& a_log,
                                   const std::optional<torch::Tensor>& dt_bias,
                                   double lower_bound) {
  const std::string where = "kda_gate_lower_bound";
  if (!std::isfinite(lower_bound) || lower_bound >= 0.0) {
    detail::fail(where, "lower_bound must be finite and < 0 (Kimi K3 uses -5), got " +
                            std::to_string(lower_bound));
  }
  auto x = biased_logits(where, g_raw, dt_bias);
  if (auto rate = decay_rate(where, g_raw, a_log)) x = x * *rate;
  return lower_bound * torch::sigmoid(x);  // (B, T, H, K) in (lower_bound, 0)
}

torch::Tensor kda_gate_softplus(const torch::Tensor& g_raw,
                                const std::optional<torch::Tensor>& a_log,
                                const std::optional<torch::Tensor>& dt_bias) {
  const std::string where = "kda_gate_softplus";
  auto gate = -torch::softplus(biased_logits(where, g_raw, dt_bias));
  if (auto rate = decay_rate(where, g_raw, a_log)) gate = gate * *rate;
  return gate;  // (B, T, H, K) in (-inf, 0)
}

}  // namespace k3lab::models
