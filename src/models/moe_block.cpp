#include "k3lab/models/moe_block.hpp"

#include <torch/torch.h>

#include "k3lab/models/feed_forward.hpp"

namespace k3lab::models {

torch::Tensor within_capacity(const torch::Tensor& experts, int n_experts, std::int64_t capacity) {
  const auto flat = experts.reshape({-1});                                          // (m k)
  const auto one_hot = torch::zeros({flat.size(0), n_experts}, torch::dtype(torch::kInt64).device(flat.device()))
                           .scatter_(1, flat.unsqueeze(1), 1);                      // (m k, n)
  const auto position = (one_hot.cumsum(0) * one_hot).sum(1);                       // (m k), 1-based
  return (position <= capacity).reshape(experts.sizes());                           // (m, k)
}

MoeBlockImpl::MoeBlockImpl(const MoeOptions& options) : options_(options) {
  router = register_module("router", torch::nn::Linear(torch::nn::LinearOptions(options.hidden_size, options.n_experts).bias(false)));
  experts = register_module("experts", torch::nn::ModuleList());
  for (int j = 0; j < options.n_experts; ++j) {
    experts->push_back(FeedForward(FeedForwardOptions{options.hidden_size, options.expert_hidden, FfnKind::SwiGlu}));
  }
  correction_bias = register_buffer("correction_bias", torch::zeros({options.n_experts}));
}

MoeOutput MoeBlockImpl::forward(const torch::Tensor& x) {
  const auto d = x.size(-1);
  const auto tokens = x.reshape({-1, d});                                  // (m, D)
  const auto scores = torch::sigmoid(router(tokens).to(torch::kFloat32));  // (m, n)
  const auto sel = select_experts(scores, correction_bias, options_.top_k);
  const auto kept = within_capacity(sel.experts, options_.n_experts, options_.capacity);  // (m, k)
  const auto weights = (sel.weights * kept.to(sel.weights.dtype())).to(x.dtype());        // (m, k)

  auto out = torch::zeros_like(tokens);  // (m, D)
  for (int j = 0; j < options_.n_experts; ++j) {
    const auto hit = (sel.experts == j) & kept;                  // (m, k)
    const auto rows = hit.any(1).nonzero().squeeze(1);           // (t)
    if (rows.numel() == 0) continue;
    const auto w = (weights * hit.to(weights.dtype())).sum(1).index_select(0, rows);     // (t)
    const auto y = experts[j]->as<FeedForwardImpl>()->forward(tokens.index_select(0, rows));  // (t, D)
    out = out.index_add(0, rows, y * w.unsqueeze(1));
  }

  MoeOutput result;
  result.output = out.reshape(x.sizes());
  if (options_.control == RouterControl::AuxLoss) {
    result.aux_loss = aux_balance_loss(scores, sel.experts, options_.top_k, options_.aux_coefficient);
  }
  result.stats.scores = scores.detach();
  result.stats.cutoff = sel.cutoff.detach();
  result.stats.loads = expert_loads(sel.experts, options_.n_experts);
  result.stats.assignments = sel.experts.numel();
  result.stats.dropped = result.stats.assignments - kept.sum().item<std::int64_t>();
  return result;
}

void MoeBlockImpl::update_bias(const RoutingStats& stats, double fixed_step) {
  torch::NoGradGuard no_grad;
  if (options_.control == RouterControl::FixedStepBias) {
    correction_bias.copy_(fixed_step_update(correction_bias.cpu(), stats.loads, fixed_step));
  } else if (options_.control == RouterControl::QuantileBalancing) {
    correction_bias.copy_(quantile_balancing_update(stats.scores, stats.cutoff, options_.top_k));
  }
}

}  // namespace k3lab::models
