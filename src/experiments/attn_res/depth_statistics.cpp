#include "attn_res/depth_statistics.hpp"

#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

#include "k3lab/models/rms_norm.hpp"

namespace k3lab::experiments::attn_res {

nlohmann::json AggregationStats::to_json() const {
  return {{"sources", sources},        {"entropy", entropy},
          {"max_entropy", max_entropy}, {"diversity", diversity},
          {"recent_weight", recent_weight}, {"collapsed", collapsed()}};
}

AggregationStats aggregation_stats(const torch::Tensor& weights) {
  if (!weights.defined() || weights.dim() != 3 || weights.size(0) < 1 || weights.numel() == 0) {
    throw std::invalid_argument("aggregation_stats: weights must be a non-empty (sources, B, T) tensor");
  }
  torch::NoGradGuard no_grad;
  const auto w = weights.detach().to(torch::kDouble).reshape({weights.size(0), -1});  // (N, M)
  const std::int64_t n = w.size(0), m = w.size(1);
  AggregationStats s;
  s.sources = n;
  s.max_entropy = std::log(static_cast<double>(n));
  // 0 ln 0 = 0: clamping only changes terms whose weight is already 0.
  s.entropy = (-(w * w.clamp_min(1e-300).log()).sum(0)).mean().item<double>();
  const auto preferred = w.argmax(0);                         // (M,), first maximum on ties
  const auto counts = torch::bincount(preferred, {}, n);      // (N,)
  s.diversity = 1.0 - counts.max().item<double>() / static_cast<double>(m);
  s.recent_weight = w[n - 1].mean().item<double>();
  return s;
}

torch::Tensor depth_weights(const torch::Tensor& query, const torch::Tensor& gain,
                            const std::vector<torch::Tensor>& sources, double eps) {
  if (sources.empty()) throw std::invalid_argument("depth_weights: no sources");
  const auto values = torch::stack(sources, 0);                                      // (N, B, T, D)
  const auto cdt = values.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const auto keys = models::rms_normalize(values.to(cdt), eps) * gain.to(cdt);        // (N, B, T, D)
  return torch::softmax((keys * query.to(cdt)).sum(-1), 0);                          // (N, B, T)
}

nlohmann::json DepthSummary::to_json() const {
  return {{"aggregations", aggregations},
          {"mean_entropy", mean_entropy},
          {"mean_normalised_entropy", mean_normalised_entropy},
          {"mean_diversity", mean_diversity},
          {"collapse_fraction", collapse_fraction}};
}

DepthSummary summarise_depth(const std::vector<AggregationStats>& aggregations) {
  DepthSummary d;
  for (const auto& a : aggregations) {
    if (a.sources < 2) continue;
    ++d.aggregations;
    d.mean_entropy += a.entropy;
    d.mean_normalised_entropy += a.entropy / a.max_entropy;
    d.mean_diversity += a.diversity;
    d.collapse_fraction += a.collapsed() ? 1.0 : 0.0;
  }
  if (d.aggregations > 0) {
    const double n = static_cast<double>(d.aggregations);
    d.mean_entropy /= n;
    d.mean_normalised_entropy /= n;
    d.mean_diversity /= n;
    d.collapse_fraction /= n;
  }
  return d;
}

}  // namespace k3lab::experiments::attn_res
