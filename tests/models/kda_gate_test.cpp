// KDA gates against their formulas evaluated element by element in double precision.
#include <k3lab/models/kda_gate.hpp>
#include <k3lab/models/random_tensor.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

namespace k3lab::models {
namespace {

struct GateInputs {
  torch::Tensor g_raw, a_log, dt_bias;  // (B, T, H, K), (H), (H * K)
};

GateInputs make_gate_inputs(std::uint64_t seed) {
  core::Rng rng(seed);
  return {normal_tensor({2, 3, 4, 5}, rng, 0, 2), normal_tensor({4}, rng), normal_tensor({20}, rng)};
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }

TEST(KdaGate, LowerBoundMatchesFormulaAndStaysInsideTheBound) {
  const auto in = make_gate_inputs(1);
  const auto g = kda_gate_lower_bound(in.g_raw, in.a_log, in.dt_bias, -5.0);
  ASSERT_EQ(g.sizes(), in.g_raw.sizes());
  EXPECT_EQ(g.scalar_type(), torch::kFloat);
  auto raw = in.g_raw.accessor<float, 4>();
  auto a = in.a_log.accessor<float, 1>();
  auto dt = in.dt_bias.accessor<float, 1>();
  auto out = g.accessor<float, 4>();
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int h = 0; h < 4; ++h)
        for (int k = 0; k < 5; ++k) {
          const double expected = -5.0 * sigmoid(std::exp(a[h]) * (raw[b][t][h][k] + dt[h * 5 + k]));
          EXPECT_NEAR(out[b][t][h][k], expected, 1e-5);
          EXPECT_GT(out[b][t][h][k], -5.0);
          EXPECT_LT(out[b][t][h][k], 0.0);
        }
}

TEST(KdaGate, LowerBoundWithoutALogOrBiasIsPlainScaledSigmoid) {
  const auto in = make_gate_inputs(2);
  const auto g = kda_gate_lower_bound(in.g_raw, std::nullopt, std::nullopt, -3.0);
  EXPECT_LT((g - (-3.0 * torch::sigmoid(in.g_raw))).abs().max().item<double>(), 1e-6);
}

TEST(KdaGate, BiasAcceptsFlatAndHeadMajorLayouts) {
  const auto in = make_gate_inputs(3);
  const auto flat = kda_gate_lower_bound(in.g_raw, in.a_log, in.dt_bias);
  const auto shaped = kda_gate_lower_bound(in.g_raw, in.a_log, in.dt_bias.view({4, 5}));
  EXPECT_TRUE(torch::equal(flat, shaped));
  EXPECT_THROW(kda_gate_lower_bound(in.g_raw, in.a_log, in.dt_bias.narrow(0, 0, 19)), std::invalid_argument);
  EXPECT_THROW(kda_gate_lower_bound(in.g_raw, in.a_log.narrow(0, 0, 3), in.dt_bias), std::invalid_argument);
}

TEST(KdaGate, RejectsNonNegativeLowerBound) {
  const auto in = make_gate_inputs(4);
  EXPECT_THROW(kda_gate_lower_bound(in.g_raw, std::nullopt, std::nullopt, 0.0), std::invalid_argument);
  EXPECT_THROW(kda_gate_lower_bound(in.g_raw, std::nullopt, std::nullopt, 1.0), std::invalid_argument);
}

TEST(KdaGate, SoftplusMatchesFormula) {
  const auto in = make_gate_inputs(5);
  const auto g = kda_gate_softplus(in.g_raw, in.a_log, in.dt_bias);
  auto raw = in.g_raw.accessor<float, 4>();
  auto a = in.a_log.accessor<float, 1>();
  auto dt = in.dt_bias.accessor<float, 1>();
  auto out = g.accessor<float, 4>();
  for (int h = 0; h < 4; ++h)
    for (int k = 0; k < 5; ++k) {
      const double expected = -std::exp(a[h]) * softplus(raw[1][2][h][k] + dt[h * 5 + k]);
      EXPECT_NEAR(out[1][2][h][k], expected, 1e-5 * (1 + std::abs(expected)));
    }
  EXPECT_LT(g.max().item<double>(), 0.0);
}

}  // namespace
}  // namespace k3lab::models
