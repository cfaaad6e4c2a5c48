// The protocol's metrics against hand-computed values, and the decision rule.
#include <gtest/gtest.h>

#include <cmath>

#include "router_balance/decision.hpp"
#include "router_balance/routing_metrics.hpp"

namespace k3lab::experiments::router_balance {
namespace {

TEST(RoutingMetrics, LoadCvIsPopulationStdOverMean) {
  // loads (4, 2, 2, 0): mean 2, population variance (4 + 0 + 0 + 4) / 4 = 2.
  EXPECT_DOUBLE_EQ(load_cv({4, 2, 2, 0}), std::sqrt(2.0) / 2.0);
  EXPECT_DOUBLE_EQ(load_cv({3, 3, 3}), 0.0);
}

TEST(RoutingMetrics, MaxToMeanAndDroppedRate) {
  EXPECT_DOUBLE_EQ(max_to_mean({4, 2, 2, 0}), 2.0);
  EXPECT_DOUBLE_EQ(dropped_rate(3, 12), 0.25);
}

TEST(RoutingMetrics, FinalLossIsTheWindowMean) {
  EXPECT_DOUBLE_EQ(final_loss({5, 4, 3, 2, 1}, 2), 1.5);
  EXPECT_THROW(final_loss({1, 2}, 3), std::invalid_argument);
  EXPECT_THROW(final_loss({1, 2}, 0), std::invalid_argument);
}

TEST(RoutingMetrics, OscillationCountsMeanAbsoluteChangeAndSignFlips) {
  OscillationTracker t;
  // One layer, two experts. Expert 0: 0 -> 1 -> 0 -> 0 -> 1 (changes +1 -1 0 +1); expert 1: 0 -> 1 -> 2 -> 3 -> 4.
  t.observe({{0, 0}});
  t.observe({{1, 1}});
  t.observe({{0, 2}});
  t.observe({{0, 3}});
  t.observe({{1, 4}});
  EXPECT_EQ(t.changes(), 8);
  EXPECT_DOUBLE_EQ(t.mean_abs_change(), 7.0 / 8.0);
  // Nonzero pairs: expert 0 (+1,-1) flip, (-1,+1) flip; expert 1 three pairs, no flip -> 2 / 5.
  EXPECT_EQ(t.change_pairs(), 5);
  EXPECT_DOUBLE_EQ(t.sign_flip_fraction(), 0.4);
}

TEST(RoutingMetrics, OscillationIsZeroWithoutChanges) {
  OscillationTracker t;
  t.observe({{0.5}});
  t.observe({{0.5}});
  EXPECT_DOUBLE_EQ(t.mean_abs_change(), 0.0);
  EXPECT_DOUBLE_EQ(t.sign_flip_fraction(), 0.0);
}

TEST(RouterBalanceDecision, NeedsAllThreeConditions) {
  const report::Interval lower{-0.1, -0.2, -0.05, 0.95}, straddles{-0.1, -0.2, 0.05, 0.95};
  const report::Interval small_loss{0.001, -0.002, 0.004, 0.95}, big_loss{0.004, 0.001, 0.006, 0.95};
  EXPECT_TRUE(decide(lower, lower, small_loss, 0.005).supported());
  EXPECT_FALSE(decide(straddles, lower, small_loss, 0.005).supported());
  EXPECT_FALSE(decide(lower, straddles, small_loss, 0.005).supported());
  const auto d = decide(lower, lower, big_loss, 0.005);
  EXPECT_TRUE(d.cv_lower && d.oscillation_lower);
  EXPECT_FALSE(d.loss_within_budget);
  EXPECT_TRUE(decide(lower, lower, {0.004, 0.003, 0.005, 0.95}, 0.005).loss_within_budget);  // at most +0.5%
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
