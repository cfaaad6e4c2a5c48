// The MoE block: capacity dropping, identical init across arms, bias updates in the right arms only.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "k3lab/models/moe_lm.hpp"
#include "router_balance/moe_model.hpp"

namespace k3lab::experiments::router_balance {
namespace {

using namespace k3lab::models;  // the MoE block and model live in models/

Parameters tiny() {
  Parameters p;
  p.model = {64, 16, 2, 2, 8, 4, 2, 16, "sigmoid"};
  p.capacity_factor = 1.25;
  p.batch_tokens = 16;
  p.sequence_length = 8;
  p.aux_loss_coefficient = 0.01;
  p.fixed_step = 0.001;
  return p;
}

TEST(MoeBlock, CapacityKeepsTheFirstAssignmentsInTokenOrder) {
  // Expert 0 chosen by all three tokens, capacity 2: the third token's assignment is dropped.
  const auto experts = torch::tensor({{0, 1}, {0, 2}, {0, 1}}, torch::kInt64);
  const auto kept = within_capacity(experts, 3, 2);
  EXPECT_TRUE(kept[0][0].item<bool>());
  EXPECT_TRUE(kept[1][0].item<bool>());
  EXPECT_FALSE(kept[2][0].item<bool>());
  EXPECT_TRUE(kept[2][1].item<bool>());
}

TEST(MoeBlock, ForwardReportsLoadsDropsAndAuxLossOnlyInItsArm) {
  const auto p = tiny();
  EXPECT_EQ(p.expert_capacity(), 10);  // ceil(16 * 2 / 4 * 1.25)
  MoeLm aux(moe_lm_options(p, RouterControl::AuxLoss), 7), none(moe_lm_options(p, RouterControl::None), 7);
  const auto tokens = torch::arange(16, torch::kInt64).view({2, 8}) % 64;
  const auto a = aux->forward(tokens), n = none->forward(tokens);
  EXPECT_TRUE(a.aux_loss.defined());
  EXPECT_FALSE(n.aux_loss.defined());
  EXPECT_TRUE(torch::equal(a.logits, n.logits));  // same init, no bias: identical forward
  ASSERT_EQ(a.routing.size(), 2u);
  EXPECT_EQ(a.routing[0].loads.sum().item<std::int64_t>(), 32);
  EXPECT_EQ(a.routing[0].assignments, 32);
  std::int64_t over = 0;
  for (int j = 0; j < 4; ++j) over += std::max<std::int64_t>(0, a.routing[0].loads[j].item<std::int64_t>() - 10);
  EXPECT_EQ(a.routing[0].dropped, over);
}

TEST(MoeBlock, OnlyTheBiasArmsMoveTheBias) {
  const auto p = tiny();
  const auto tokens = torch::arange(16, torch::kInt64).view({2, 8}) % 64;
  for (auto control : {RouterControl::None, RouterControl::AuxLoss, RouterControl::FixedStepBias,
                       RouterControl::QuantileBalancing}) {
    MoeLm model(moe_lm_options(p, control), 3);
    const auto out = model->forward(tokens);
    model->update_biases(out.routing, p.fixed_step);
    double moved = 0;
    for (const auto& layer : model->biases()) {
      for (double b : layer) moved += std::abs(b);
    }
    if (uses_bias(control)) {
      EXPECT_GT(moved, 0.0);
    } else {
      EXPECT_EQ(moved, 0.0);
    }
    if (control == RouterControl::FixedStepBias) {
      const auto biases = model->biases();
      for (double b : biases[0]) EXPECT_NEAR(std::abs(b), b == 0 ? 0.0 : 0.001, 1e-7);
    }
  }
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
