// SiTU-GLU: the formula element by element, the |y| <= b1*b2 bound, and autograd gradients against
// central finite differences in float64 (gradcheck style).
#include <k3lab/models/activations.hpp>
#include <k3lab/models/random_tensor.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace k3lab::models {
namespace {

TEST(SituGlu, MatchesFormulaElementwise) {
  const auto gate = torch::linspace(-40, 40, 81, torch::kDouble);
  const auto up = torch::linspace(100, -100, 81, torch::kDouble);
  const auto y = situ_glu(gate, up, 4.0, 25.0);
  for (int i = 0; i < 81; ++i) {
    const double g = gate[i].item<double>(), u = up[i].item<double>();
    const double expected = 4.0 * std::tanh(g / 4.0) / (1.0 + std::exp(-g)) * 25.0 * std::tanh(u / 25.0);
    EXPECT_NEAR(y[i].item<double>(), expected, 1e-12);
  }
}

TEST(SituGlu, OutputIsBoundedByBetaProduct) {
  core::Rng rng(9);
  const auto gate = normal_tensor({4096}, rng, 0, 200, torch::kDouble);
  const auto up = normal_tensor({4096}, rng, 0, 2000, torch::kDouble);
  const auto y = situ_glu(gate, up, 4.0, 25.0);
  EXPECT_LE(y.abs().max().item<double>(), 100.0);
  EXPECT_GT(y.abs().max().item<double>(), 90.0);  // the bound is approached, not just respected
  const auto y2 = situ_glu(gate, up, 2.0, 3.0);
  EXPECT_LE(y2.abs().max().item<double>(), 6.0);
  // SwiGLU has no such bound on the same inputs.
  EXPECT_GT(swiglu(gate, up).abs().max().item<double>(), 1000.0);
}

TEST(SituGlu, ApproachesSwigluNearZero) {
  const auto gate = torch::linspace(-0.1, 0.1, 21, torch::kDouble);
  const auto up = torch::linspace(0.1, -0.1, 21, torch::kDouble);
  EXPECT_LT((situ_glu(gate, up) - swiglu(gate, up)).abs().max().item<double>(), 1e-4);
}

TEST(SituGlu, GradientMatchesFiniteDifferences) {
  core::Rng rng(10);
  const auto gate0 = normal_tensor({64}, rng, 0, 8, torch::kDouble);
  const auto up0 = normal_tensor({64}, rng, 0, 40, torch::kDouble);
  const auto weights = normal_tensor({64}, rng, 0, 1, torch::kDouble);
  auto gate = gate0.clone().requires_grad_(true);
  auto up = up0.clone().requires_grad_(true);
  (situ_glu(gate, up, 4.0, 25.0) * weights).sum().backward();
  const double h = 1e-6;
  auto loss = [&](const torch::Tensor& g, const torch::Tensor& u) {
    return (situ_glu(g, u, 4.0, 25.0) * weights).sum().item<double>();
  };
  for (int i = 0; i < 64; ++i) {
    auto gp = gate0.clone(), gm = gate0.clone(), upp = up0.clone(), upm = up0.clone();
    gp[i] += h;
    gm[i] -= h;
    upp[i] += h;
    upm[i] -= h;
    const double dg = (loss(gp, up0) - loss(gm, up0)) / (2 * h);
    const double du = (loss(gate0, upp) - loss(gate0, upm)) / (2 * h);
    EXPECT_NEAR(gate.grad()[i].item<double>(), dg, 1e-6 * (1 + std::abs(dg))) << i;
    EXPECT_NEAR(up.grad()[i].item<double>(), du, 1e-6 * (1 + std::abs(du))) << i;
  }
}

TEST(SituGlu, RejectsBadArguments) {
  const auto x = torch::ones({4});
  EXPECT_THROW(situ_glu(x, x, 0.0, 25.0), std::invalid_argument);
  EXPECT_THROW(situ_glu(x, x, 4.0, -1.0), std::invalid_argument);
  EXPECT_THROW(situ_glu(x, torch::ones({5}), 4.0, 25.0), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::models
