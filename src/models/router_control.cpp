#include "k3lab/models/router_control.hpp"

#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

namespace k3lab::models {

bool uses_bias(RouterControl control) {
  return control == RouterControl::FixedStepBias || control == RouterControl::QuantileBalancing;
}

Selection select_experts(const torch::Tensor& scores, const torch::Tensor& bias, int top_k) {
  const auto n = scores.size(1);
  const auto biased = scores.detach() + bias.to(scores.dtype()).unsqueeze(0);  // (m, n)
  const auto take = std::min<std::int64_t>(top_k + 1, n);
  auto [values, ids] = biased.topk(take, /*dim=*/1);  // (m, take), descending
  Selection s;
  s.experts = ids.narrow(1, 0, top_k);                                   // (m, k)
  s.cutoff = take > top_k ? values.select(1, top_k).clone()              // (m)
                          : torch::full({scores.size(0)}, -INFINITY, scores.options().requires_grad(false));
  const auto chosen = scores.gather(1, s.experts);                       // (m, k), carries gradients
  s.weights = chosen / chosen.sum(1, /*keepdim=*/true);
  return s;
}

torch::Tensor expert_loads(const torch::Tensor& experts, int n_experts) {
  return torch::bincount(experts.reshape({-1}).to(torch::kCPU), {}, n_experts);  // (n)
}

torch::Tensor aux_balance_loss(const torch::Tensor& scores, const torch::Tensor& experts, int top_k,
                               double coefficient) {
  const auto m = scores.size(0), n = scores.size(1);
  auto routed = torch::zeros_like(scores).scatter_(1, experts, 1.0);      // (m, n) one-hot of the routes
  const auto f = routed.sum(0) / static_cast<double>(m * top_k);          // (n), sums to 1
  const auto p = (scores / scores.sum(1, /*keepdim=*/true)).mean(0);      // (n), sums to 1
  return coefficient * static_cast<double>(n) * (f.detach() * p).sum();
}

torch::Tensor fixed_step_update(const torch::Tensor& bias, const torch::Tensor& loads, double step) {
  const auto l = loads.to(torch::kFloat64);
  return bias + (step * torch::sign(l.mean() - l)).to(bias.dtype());
}

torch::Tensor quantile_balancing_update(const torch::Tensor& scores, const torch::Tensor& cutoff, int top_k) {
  const auto m = scores.size(0), n = scores.size(1);
  const auto q = static_cast<std::int64_t>(std::floor(static_cast<double>(m) * top_k / static_cast<double>(n)));
  if (q >= m) {
    throw std::invalid_argument("MoE router: Quantile Balancing needs tokens x top_k / n_experts < tokens; "
                                "use fewer experts per token (top_k < n_experts)");
  }
  const auto margins = scores.detach().to(torch::kFloat64) - cutoff.to(torch::kFloat64).unsqueeze(1);  // (m, n)
  const auto sorted = std::get<0>(margins.sort(/*dim=*/0, /*descending=*/true));                        // (m, n)
  const auto b_hat = -sorted.select(0, q);                                                               // (n)
  return (b_hat - b_hat.mean()).to(torch::kFloat32);
}

}  // namespace k3lab::models
