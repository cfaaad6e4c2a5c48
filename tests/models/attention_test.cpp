// Full causal attention: the masked softmax against an explicit loop, RoPE's relative-position
// property, and KV-cache decoding against the plain forward.
#include <k3lab/models/causal_attention.hpp>
#include <k3lab/models/init.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/rope.hpp>
#include <k3lab/models/tensor_compare.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace k3lab::models {
namespace {

TEST(CausalSoftmaxAttention, MatchesExplicitLoop) {
  core::Rng rng(1);
  const std::int64_t T = 5, S = 7, d = 4, dv = 3;  // the 5 queries are the last 5 of 7 positions
  const auto q = normal_tensor({1, 1, T, d}, rng, 0, 1, torch::kDouble);
  const auto k = normal_tensor({1, 1, S, d}, rng, 0, 1, torch::kDouble);
  const auto v = normal_tensor({1, 1, S, dv}, rng, 0, 1, torch::kDouble);
  const auto out = causal_softmax_attention(q, k, v, 0.5);
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t visible = S - T + t + 1;
    std::vector<double> w(visible);
    double total = 0.0;
    for (std::int64_t s = 0; s < visible; ++s) {
      w[s] = std::exp(0.5 * (q[0][0][t] * k[0][0][s]).sum().item<double>());
      total += w[s];
    }
    for (std::int64_t c = 0; c < dv; ++c) {
      double expected = 0.0;
      for (std::int64_t s = 0; s < visible; ++s) expected += w[s] / total * v[0][0][s][c].item<double>();
      EXPECT_NEAR(out[0][0][t][c].item<double>(), expected, 1e-12);
    }
  }
}

TEST(Rope, ScoresDependOnlyOnRelativePosition) {
  core::Rng rng(2);
  const auto q = normal_tensor({1, 1, 1, 8}, rng, 0, 1, torch::kDouble);
  const auto k = normal_tensor({1, 1, 1, 8}, rng, 0, 1, torch::kDouble);
  auto score = [&](std::int64_t m, std::int64_t n) {
    return (apply_rope(q, m, 100.0) * apply_rope(k, n, 100.0)).sum().item<double>();
  };
  EXPECT_NEAR(score(5, 2), score(10, 7), 1e-12);
  EXPECT_NEAR(score(0, 0), (q * k).sum().item<double>(), 1e-12);
  EXPECT_GT(std::abs(score(5, 2) - score(5, 4)), 1e-6);
}

class AttentionDecode : public ::testing::TestWithParam<double> {};

TEST_P(AttentionDecode, CachedDecodeMatchesForward) {
  AttentionOptions o;
  o.hidden_size = 32;
  o.num_heads = 4;
  o.head_dim = 8;
  o.rope_theta = GetParam();
  CausalSelfAttention attn(o);
  initialize_parameters(*attn, 3);
  attn->to(torch::kDouble);
  core::Rng rng(4);
  const auto x = normal_tensor({2, 13, 32}, rng, 0, 1, torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto full = attn->forward(x);
  KvCache cache;
  std::vector<torch::Tensor> pieces{attn->forward_with_cache(x.narrow(1, 0, 4), cache)};
  for (std::int64_t t = 4; t < 13; ++t) pieces.push_back(attn->forward_with_cache(x.narrow(1, t, 1), cache));
  EXPECT_LT(rmse_ratio(full, torch::cat(pieces, 1)), 1e-10);
  EXPECT_EQ(cache.bytes(), 2 * 2 * 13 * 4 * 8 * 8);  // K and V, B, T, H, d, float64
}

INSTANTIATE_TEST_SUITE_P(Positions, AttentionDecode, ::testing::Values(0.0, 10000.0),
                         [](const auto& info) { return info.param == 0.0 ? "NoPE" : "RoPE"; });

}  // namespace
}  // namespace k3lab::models
