// hybrid-attention's decision rule against hand-computed frontier points.
#include <gtest/gtest.h>

#include "hybrid_attention/decision.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

TEST(Decision, TheHybridMustMoveTheFrontierNotJustUseLessMemory) {
  // The all-KDA (10, 0.5) to full-attention (100, 0.9) line at memory 50: 0.5 + 0.4 x 40 / 90 = 0.67778.
  const auto below = decide({0.6, 50}, {0.5, 10}, {0.9, 100});
  EXPECT_TRUE(below.retrieval_above_kda);
  EXPECT_TRUE(below.memory_below_full);
  ASSERT_TRUE(below.above_frontier.has_value());
  EXPECT_FALSE(*below.above_frontier);
  EXPECT_NEAR(below.frontier_retrieval, 0.677777777777778, 1e-12);
  EXPECT_FALSE(below.supported());

  const auto above = decide({0.8, 50}, {0.5, 10}, {0.9, 100});
  EXPECT_TRUE(above.above_frontier.value_or(false));
  EXPECT_TRUE(above.supported());

  const auto more_memory = decide({0.95, 120}, {0.5, 10}, {0.9, 100});
  EXPECT_FALSE(more_memory.memory_below_full);
  EXPECT_FALSE(more_memory.supported());
}

TEST(Decision, EqualMemoryLeavesTheFrontierConditionUndefined) {
  const auto d = decide({0.8, 50}, {0.5, 100}, {0.9, 100});
  EXPECT_FALSE(d.above_frontier.has_value());
  EXPECT_FALSE(d.supported());
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
