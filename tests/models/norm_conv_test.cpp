// RMSNorm, gated RMSNorm and the short causal convolution against their definitions.
#include <k3lab/core/rng.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/rms_norm.hpp>
#include <k3lab/models/short_conv.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace k3lab::models {
namespace {

double silu(double x) { return x / (1.0 + std::exp(-x)); }

TEST(RMSNorm, MatchesDefinition) {
  core::Rng rng(1);
  RMSNorm norm(6, 1e-5);
  norm->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    norm->weight.copy_(uniform_tensor({6}, rng, 0.5, 2.0, torch::kDouble));
  }
  const auto x = normal_tensor({3, 6}, rng, 0, 3, torch::kDouble);
  const auto y = norm(x);
  for (int r = 0; r < 3; ++r) {
    double ms = 0.0;
    for (int d = 0; d < 6; ++d) ms += x[r][d].item<double>() * x[r][d].item<double>() / 6.0;
    for (int d = 0; d < 6; ++d) {
      EXPECT_NEAR(y[r][d].item<double>(), x[r][d].item<double>() / std::sqrt(ms + 1e-5) * norm->weight[d].item<double>(), 1e-12);
    }
  }
}

TEST(GatedRMSNorm, MultipliesBySigmoidOfGate) {
  core::Rng rng(2);
  GatedRMSNorm gated(4, 1e-5);
  RMSNorm plain(4, 1e-5);
  const auto x = normal_tensor({2, 3, 4}, rng);
  const auto gate = normal_tensor({2, 3, 4}, rng);
  EXPECT_TRUE(torch::allclose(gated(x, gate), plain(x) * torch::sigmoid(gate)));
  EXPECT_THROW(gated(x, gate.narrow(2, 0, 3)), std::invalid_argument);
}

TEST(ShortConv, IsACausalDepthwiseConvolutionWithSilu) {
  core::Rng rng(3);
  const std::int64_t C = 3, W = 4, T = 7;
  ShortConv conv(C, W);
  conv->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    conv->weight.copy_(normal_tensor({C, W}, rng, 0, 1, torch::kDouble));
  }
  const auto x = normal_tensor({1, T, C}, rng, 0, 1, torch::kDouble);
  const auto y = conv(x);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t c = 0; c < C; ++c) {
      double acc = 0.0;
      for (std::int64_t i = 0; i < W; ++i) {
        const std::int64_t src = t - (W - 1) + i;  // weight[c, W-1] multiplies the current token
        if (src >= 0) acc += conv->weight[c][i].item<double>() * x[0][src][c].item<double>();
      }
      EXPECT_NEAR(y[0][t][c].item<double>(), silu(acc), 1e-12) << t << "," << c;
    }
  // Feeding the sequence in two pieces through the cache gives the same result.
  torch::Tensor cache;
  const auto a = conv->forward_with_cache(x.narrow(1, 0, 2), cache);
  const auto b = conv->forward_with_cache(x.narrow(1, 2, T - 2), cache);
  EXPECT_LT((torch::cat({a, b}, 1) - y).abs().max().item<double>(), 1e-12);
  EXPECT_EQ(cache.sizes(), (std::vector<std::int64_t>{1, W - 1, C}));
}

// The gradients of the shifted-product form against ATen's depthwise conv1d of the same window.
TEST(ShortConv, GradientsMatchDepthwiseConv1d) {
  core::Rng rng(4);
  const std::int64_t B = 2, C = 5, W = 4, T = 9;
  ShortConv conv(C, W);
  conv->to(torch::kDouble);
  {
    torch::NoGradGuard no_grad;
    conv->weight.copy_(normal_tensor({C, W}, rng, 0, 1, torch::kDouble));
  }
  const auto x = normal_tensor({B, T, C}, rng, 0, 1, torch::kDouble).requires_grad_(true);
  const auto upstream = normal_tensor({B, T, C}, rng, 0, 1, torch::kDouble);
  (conv(x) * upstream).sum().backward();

  const auto x_ref = x.detach().clone().requires_grad_(true);
  const auto w_ref = conv->weight.detach().clone().requires_grad_(true);
  const auto window = torch::constant_pad_nd(x_ref.transpose(1, 2), {W - 1, 0});  // (B, C, W - 1 + T)
  const auto y_ref = torch::conv1d(window, w_ref.unsqueeze(1), torch::Tensor(), at::IntArrayRef{1},
                                     at::IntArrayRef{0}, at::IntArrayRef{1}, C);  // (B, C, T)
  (torch::silu(y_ref.transpose(1, 2)) * upstream).sum().backward();
  EXPECT_LT((x.grad() - x_ref.grad()).abs().max().item<double>(), 1e-12);
  EXPECT_LT((conv->weight.grad() - w_ref.grad()).abs().max().item<double>(), 1e-12);
}

}  // namespace
}  // namespace k3lab::models
