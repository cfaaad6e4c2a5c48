// attn-res's metric arithmetic against hand-computed values: stored residual memory per mode,
// depth-attention statistics, the depth weights against the model's own mixture, and the paired
// relative improvement with its bootstrap interval.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "attn_res/arm_model.hpp"
#include "attn_res/decision.hpp"
#include "attn_res/depth_probe.hpp"
#include "attn_res/depth_statistics.hpp"
#include "attn_res/parameters.hpp"
#include "attn_res/residual_memory.hpp"
#include "attn_res_protocol.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/models/residual.hpp"

namespace k3lab::experiments::attn_res {
namespace {

using models::ResidualMode;

using testing::attn_res_protocol;

TEST(StoredResidualMemory, SourcesPerMode) {
  EXPECT_EQ(stored_residual_sources(ResidualMode::Standard, 36, 12), 1);
  EXPECT_EQ(stored_residual_sources(ResidualMode::FullAttnRes, 36, 12), 73);   // embedding + 72 sublayers
  EXPECT_EQ(stored_residual_sources(ResidualMode::BlockAttnRes, 36, 12), 4);   // embedding + 3 blocks
  EXPECT_EQ(stored_residual_sources(ResidualMode::FullAttnRes, 6, 2), 13);
  EXPECT_EQ(stored_residual_sources(ResidualMode::BlockAttnRes, 6, 2), 4);
  EXPECT_EQ(stored_residual_sources(ResidualMode::BlockAttnRes, 7, 2), 5);     // last block partial
  EXPECT_EQ(stored_residual_sources(ResidualMode::BlockAttnRes, 93, 12), 9);   // K3: 8 blocks + embedding
  EXPECT_THROW(stored_residual_sources(ResidualMode::BlockAttnRes, 6, 0), std::invalid_argument);
}

TEST(StoredResidualMemory, BytesOfTheSmokeShape) {
  const auto p = parse_parameters(attn_res_protocol().parameters_for("smoke"));  // L = 6, D = 32, S = 2
  const std::int64_t tokens = 2 * 64;                                    // two rows of 64
  EXPECT_EQ(stored_residual_memory(arm_model_config(p, "ordinary-residual"), 4, tokens).bytes(), 1 * 32 * 4 * 128);
  EXPECT_EQ(stored_residual_memory(arm_model_config(p, "full-attnres"), 4, tokens).bytes(), 13 * 32 * 4 * 128);
  EXPECT_EQ(stored_residual_memory(arm_model_config(p, "block-attnres"), 4, tokens).bytes(), 4 * 32 * 4 * 128);
  const auto j = stored_residual_memory(arm_model_config(p, "block-attnres"), 4, tokens).to_json();
  EXPECT_EQ(j.at("bytes"), 65536);
  EXPECT_EQ(j.at("sources"), 4);
}

torch::Tensor two_source_weights() {
  // (N=2, B=1, T=4): tokens (0.5, 0.5), (1, 0), (0.25, 0.75), (0.9, 0.1).
  return torch::tensor({0.5, 1.0, 0.25, 0.9, 0.5, 0.0, 0.75, 0.1}, torch::kDouble).reshape({2, 1, 4});
}

TEST(DepthStatistics, EntropyDiversityAndRecentWeightByHand) {
  const auto s = aggregation_stats(two_source_weights());
  const double h0 = std::log(2.0);
  const double h2 = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  const double h3 = -(0.9 * std::log(0.9) + 0.1 * std::log(0.1));
  EXPECT_EQ(s.sources, 2);
  EXPECT_NEAR(s.entropy, (h0 + 0.0 + h2 + h3) / 4.0, 1e-12);
  EXPECT_NEAR(s.entropy, 0.3951413, 1e-6);
  EXPECT_NEAR(s.max_entropy, std::log(2.0), 1e-12);
  // argmax per token: 0 (tie -> earliest), 0, 1, 0; the most common is 0; one token of four differs.
  EXPECT_DOUBLE_EQ(s.diversity, 0.25);
  EXPECT_NEAR(s.recent_weight, (0.5 + 0.0 + 0.75 + 0.1) / 4.0, 1e-12);
  EXPECT_FALSE(s.collapsed());
}

TEST(DepthStatistics, CollapseOntoTheMostRecentSource) {
  const auto w = torch::tensor({0.05, 0.05, 0.95, 0.95}, torch::kDouble).reshape({2, 1, 2});
  const auto s = aggregation_stats(w);
  EXPECT_NEAR(s.recent_weight, 0.95, 1e-12);
  EXPECT_TRUE(s.collapsed());
  EXPECT_DOUBLE_EQ(s.diversity, 0.0);
  const auto at_threshold = torch::tensor({0.1, 0.9}, torch::kDouble).reshape({2, 1, 1});
  EXPECT_FALSE(aggregation_stats(at_threshold).collapsed());  // "exceeds 0.9"
}

TEST(DepthStatistics, UniformMixtureHasMaximalEntropyAndNoDiversity) {
  const auto s = aggregation_stats(torch::full({3, 2, 5}, 1.0 / 3.0, torch::kDouble));
  EXPECT_NEAR(s.entropy, std::log(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.diversity, 0.0);
  EXPECT_NEAR(s.recent_weight, 1.0 / 3.0, 1e-12);
}

TEST(DepthStatistics, TokensPreferringDifferentSources) {
  // Three sources, six tokens preferring 2, 2, 2, 0, 1, 1: the most common is 2, three differ.
  auto w = torch::full({3, 1, 6}, 0.1, torch::kDouble);
  const std::vector<std::int64_t> preferred = {2, 2, 2, 0, 1, 1};
  for (std::int64_t t = 0; t < 6; ++t) w.index_put_({preferred[t], 0, t}, 0.8);
  EXPECT_DOUBLE_EQ(aggregation_stats(w).diversity, 0.5);
}

TEST(DepthStatistics, SummaryCountsOnlyAggregationsWithAChoice) {
  AggregationStats one{1, 0.0, 0.0, 0.0, 1.0};
  AggregationStats a{2, 0.6, std::log(2.0), 0.25, 0.95};
  AggregationStats b{4, 1.0, std::log(4.0), 0.75, 0.2};
  const auto d = summarise_depth({one, a, b});
  EXPECT_EQ(d.aggregations, 2);
  EXPECT_NEAR(d.mean_entropy, 0.8, 1e-12);
  EXPECT_NEAR(d.mean_normalised_entropy, 0.5 * (0.6 / std::log(2.0) + 1.0 / std::log(4.0)), 1e-12);
  EXPECT_NEAR(d.mean_diversity, 0.5, 1e-12);
  EXPECT_NEAR(d.collapse_fraction, 0.5, 1e-12);
}

TEST(DepthWeights, HandExample) {
  // Keys: RMSNorm([2, 0]) = [sqrt2, 0], RMSNorm([0, 3]) = [0, sqrt2]; query [1, 0] -> logits (sqrt2, 0).
  const auto q = torch::tensor({1.0, 0.0}, torch::kDouble);
  const auto g = torch::ones({2}, torch::kDouble);
  const std::vector<torch::Tensor> sources = {torch::tensor({2.0, 0.0}, torch::kDouble).reshape({1, 1, 2}),
                                              torch::tensor({0.0, 3.0}, torch::kDouble).reshape({1, 1, 2})};
  const auto w = depth_weights(q, g, sources, 1e-12);
  const double e = std::exp(std::sqrt(2.0));
  EXPECT_NEAR(w[0][0][0].item<double>(), e / (e + 1.0), 1e-9);
  EXPECT_NEAR(w[1][0][0].item<double>(), 1.0 / (e + 1.0), 1e-9);
  // A zero (initial) pseudo-query mixes uniformly.
  const auto u = depth_weights(torch::zeros({2}, torch::kDouble), g, sources, kAttnResEps);
  EXPECT_NEAR(u[0][0][0].item<double>(), 0.5, 1e-12);
}

TEST(DepthWeights, ReproduceTheModelsMixture) {
  torch::manual_seed(7);
  models::AttnResidualImpl path(ResidualMode::FullAttnRes, 2, 8, 1);
  {
    torch::NoGradGuard no_grad;
    path.queries.copy_(torch::randn_like(path.queries));
    path.key_gains.copy_(1.0 + 0.1 * torch::randn_like(path.key_gains));
  }
  std::vector<torch::Tensor> sources;
  for (int i = 0; i < 4; ++i) sources.push_back(torch::randn({2, 3, 8}));  // (B, T, D)
  const auto w = depth_weights(path.queries[3].detach(), path.key_gains[3].detach(), sources, kAttnResEps);
  const auto mixed = (w.unsqueeze(-1) * torch::stack(sources, 0)).sum(0);  // (B, T, D)
  EXPECT_LT((mixed - path.mix(sources, 3)).abs().max().item<double>(), 1e-5);
}

Decision decision() { return parse_parameters(attn_res_protocol().parameters_for("full")).decision; }

TEST(Decision, PairedRelativeImprovementAndBootstrapByHand) {
  // Relative improvements (baseline - arm) / baseline: 0.05, 0.05, -0.01; mean 0.03.
  const std::vector<double> baseline = {2.0, 4.0, 5.0}, arm = {1.9, 3.8, 5.05};
  const auto g = paired_gain(arm, baseline, decision());
  ASSERT_EQ(g.relative_improvements.size(), 3u);
  EXPECT_NEAR(g.relative_improvements[0], 0.05, 1e-12);
  EXPECT_NEAR(g.relative_improvements[2], -0.01, 1e-12);
  EXPECT_NEAR(g.interval.estimate, 0.03, 1e-12);
  EXPECT_EQ(g.seeds_improved, 2u);
  EXPECT_TRUE(g.meets_minimum);
  // Resampling three seeds: all three the losing seed has probability 1/27 (3.7%) > 2.5%, so the lower
  // end is -0.01; all three winning ones (29.6%) put the upper end at 0.05. One losing seed in three
  // keeps zero inside: no gain.
  EXPECT_NEAR(g.interval.low, -0.01, 1e-12);
  EXPECT_NEAR(g.interval.high, 0.05, 1e-12);
  EXPECT_FALSE(g.claimed());
  const auto direct = report::paired_bootstrap_interval(arm, baseline, report::PairedEffect::RelativeImprovementLowerBetter,
                                                        10000, 4002, 0.95);
  EXPECT_EQ(g.interval.low, direct.low);
  EXPECT_EQ(g.interval.high, direct.high);
}

TEST(Decision, AConsistentGainIsClaimedOnlyAboveTheMinimum) {
  const std::vector<double> baseline = {2.0, 4.0, 5.0};
  const auto one_percent = paired_gain({1.98, 3.96, 4.95}, baseline, decision());
  EXPECT_NEAR(one_percent.interval.low, 0.01, 1e-12);
  EXPECT_TRUE(one_percent.claimed());
  const auto tiny = paired_gain({1.992, 3.984, 4.98}, baseline, decision());  // 0.4% < 0.5%
  EXPECT_TRUE(tiny.interval.excludes_zero());
  EXPECT_FALSE(tiny.claimed());
}

TEST(Decision, RegressionsAndBlocksShareOfFullsGain) {
  EXPECT_DOUBLE_EQ(memory_regression(4.0, 1.0), 3.0);
  EXPECT_NEAR(memory_regression(110.0, 100.0), 0.1, 1e-12);
  EXPECT_NEAR(throughput_regression(90.0, 100.0), 0.1, 1e-12);
  EXPECT_NEAR(throughput_regression(120.0, 100.0), -0.2, 1e-12);
  EXPECT_THROW(memory_regression(1.0, 0.0), std::invalid_argument);
  EXPECT_NEAR(*fraction_of_gain(0.01, 0.02), 0.5, 1e-12);
  EXPECT_FALSE(fraction_of_gain(0.01, 0.0).has_value());
  EXPECT_FALSE(fraction_of_gain(0.01, -0.01).has_value());
}

}  // namespace
}  // namespace k3lab::experiments::attn_res
