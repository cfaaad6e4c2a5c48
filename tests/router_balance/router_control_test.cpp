// Each routing control's update on tiny hand-worked examples.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "k3lab/models/router_control.hpp"
#include "router_balance/router_control.hpp"

namespace k3lab::experiments::router_balance {
namespace {

using namespace k3lab::models;  // the controls' math lives in models/router_control.hpp

std::vector<std::int64_t> ints(const torch::Tensor& t) {
  const auto c = t.to(torch::kInt64).contiguous();
  return {c.data_ptr<std::int64_t>(), c.data_ptr<std::int64_t>() + c.numel()};
}

TEST(RouterControl, ArmsMapToControls) {
  EXPECT_EQ(control_of_arm("no-control"), RouterControl::None);
  EXPECT_EQ(control_of_arm("aux-loss"), RouterControl::AuxLoss);
  EXPECT_EQ(control_of_arm("fixed-step-bias"), RouterControl::FixedStepBias);
  EXPECT_EQ(control_of_arm("quantile-balancing"), RouterControl::QuantileBalancing);
  EXPECT_THROW(control_of_arm("other"), std::invalid_argument);
  EXPECT_FALSE(uses_bias(RouterControl::AuxLoss));
  EXPECT_TRUE(uses_bias(RouterControl::QuantileBalancing));
}

TEST(RouterControl, SelectionUsesBiasForChoiceOnlyAndReportsTheCutoff) {
  // One token, three experts, k = 1: raw picks expert 0 (0.6); bias +0.3 on expert 2 picks 2 (0.5+0.3).
  const auto s = torch::tensor({{0.6f, 0.2f, 0.5f}});
  const auto sel = select_experts(s, torch::tensor({0.0f, 0.0f, 0.3f}), 1);
  EXPECT_EQ(ints(sel.experts), (std::vector<std::int64_t>{2}));
  EXPECT_FLOAT_EQ(sel.cutoff[0].item<float>(), 0.6f);   // second-largest biased score
  EXPECT_FLOAT_EQ(sel.weights[0][0].item<float>(), 1.0f);  // normalised raw score of the chosen one
  const auto two = select_experts(s, torch::zeros({3}), 2);
  EXPECT_FLOAT_EQ(two.weights[0][0].item<float>(), 0.6f / 1.1f);
  EXPECT_FLOAT_EQ(two.cutoff[0].item<float>(), 0.2f);
}

TEST(RouterControl, LoadsCountRoutesPerExpert) {
  const auto experts = torch::tensor({{0, 1}, {0, 2}, {0, 1}}, torch::kInt64);
  EXPECT_EQ(ints(expert_loads(experts, 4)), (std::vector<std::int64_t>{3, 2, 1, 0}));
}

TEST(RouterControl, FixedStepMovesEachBiasOneStepTowardTheMeanLoad) {
  // loads (4, 2, 2, 0), mean 2: overloaded -step, at mean unchanged, underloaded +step.
  const auto b = fixed_step_update(torch::tensor({0.1f, 0.0f, -0.2f, 0.0f}), torch::tensor({4, 2, 2, 0}, torch::kInt64), 0.001);
  EXPECT_FLOAT_EQ(b[0].item<float>(), 0.099f);
  EXPECT_FLOAT_EQ(b[1].item<float>(), 0.0f);
  EXPECT_FLOAT_EQ(b[2].item<float>(), -0.2f);
  EXPECT_FLOAT_EQ(b[3].item<float>(), 0.001f);
}

TEST(RouterControl, QuantileBalancingTakesTheQPlusFirstLargestMarginAndCentres) {
  // m = 4 tokens, n = 2 experts, k = 1: q = 2, so b_hat_j = -(3rd largest margin of expert j).
  const auto s = torch::tensor({{0.9f, 0.1f}, {0.8f, 0.3f}, {0.7f, 0.2f}, {0.6f, 0.4f}});
  const auto sel = select_experts(s, torch::zeros({2}), 1);
  // Everything goes to expert 0; cutoffs are the second scores (0.1, 0.3, 0.2, 0.4).
  EXPECT_EQ(ints(expert_loads(sel.experts, 2)), (std::vector<std::int64_t>{4, 0}));
  // margins expert 0: 0.8 0.5 0.5 0.2 -> 3rd largest 0.5;  expert 1: 0 0 0 0 -> 0.
  // b_hat = (-0.5, 0) -> centred (-0.25, 0.25).
  const auto b = quantile_balancing_update(s, sel.cutoff, 1);
  EXPECT_NEAR(b[0].item<float>(), -0.25f, 1e-6);
  EXPECT_NEAR(b[1].item<float>(), 0.25f, 1e-6);
  // With that bias: token scores +b: (0.65, 0.35) (0.55, 0.55) (0.45, 0.45) (0.35, 0.65) -> loads 2 and 2
  // up to the two exact ties, which topk breaks by index; strictly, no expert exceeds q + ties.
  const auto again = select_experts(s, b, 1);
  const auto loads = ints(expert_loads(again.experts, 2));
  EXPECT_LE(loads[1], 3);
  EXPECT_GE(loads[1], 1);
}

TEST(RouterControl, QuantileBalancingBalancesTheReferenceToy) {
  // K3 Fig. 5 shape: m = 8, n = 4, k = 1, q = 2; loads (4, 3, 1, 0) become (2, 2, 2, 2) in one update.
  const auto s = torch::tensor({{0.94f, 0.52f, 0.35f, 0.73f}, {0.91f, 0.23f, 0.79f, 0.31f}, {0.37f, 0.93f, 0.68f, 0.37f},
                                {0.55f, 0.79f, 0.32f, 0.69f}, {0.54f, 0.22f, 0.18f, 0.10f}, {0.84f, 0.18f, 0.27f, 0.08f},
                                {0.61f, 0.62f, 0.64f, 0.44f}, {0.87f, 0.92f, 0.42f, 0.72f}});
  const auto before = select_experts(s, torch::zeros({4}), 1);
  EXPECT_EQ(ints(expert_loads(before.experts, 4)), (std::vector<std::int64_t>{4, 3, 1, 0}));
  const auto b = quantile_balancing_update(s, before.cutoff, 1);
  EXPECT_NEAR(b.sum().item<float>(), 0.0f, 1e-6);
  // Third-largest margins (0.16, 0.0, -0.05, -0.17), negated and centred (mean 0.015).
  const std::vector<float> expected = {-0.175f, -0.015f, 0.035f, 0.155f};
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(b[j].item<float>(), expected[j], 1e-6) << j;
  const auto after = select_experts(s, b, 1);
  EXPECT_EQ(ints(expert_loads(after.experts, 4)), (std::vector<std::int64_t>{2, 2, 2, 2}));
}

TEST(RouterControl, AuxLossIsSwitchFormula) {
  // m = 2, n = 2, k = 1. Scores (0.6, 0.2) and (0.3, 0.3); routes 0 and 0 (tie -> index 0).
  const auto s = torch::tensor({{0.6f, 0.2f}, {0.3f, 0.3f}});
  const auto experts = torch::tensor({{0}, {0}}, torch::kInt64);
  // f = (1, 0); P = mean((0.75, 0.25), (0.5, 0.5)) = (0.625, 0.375); loss = 0.01 * 2 * 0.625.
  EXPECT_NEAR(aux_balance_loss(s, experts, 1, 0.01).item<float>(), 0.0125f, 1e-7);
  // Perfect balance gives the coefficient.
  const auto even = torch::tensor({{0.5f, 0.5f}, {0.5f, 0.5f}});
  EXPECT_NEAR(aux_balance_loss(even, torch::tensor({{0}, {1}}, torch::kInt64), 1, 0.01).item<float>(), 0.01f, 1e-7);
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
