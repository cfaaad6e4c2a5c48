// The decision rule and the boundary against hand-computed Wilson intervals:
//   24/24 at 95%: centre (1 + z^2/2n) / (1 + z^2/n) = 0.9310, half-width 0.0690 -> [0.8620, 1.0000]
//   22/24:        [0.7415, 0.9768]  (overlaps 24/24: no loss)
//   10/24:        [0.2447, 0.6116]  (below 0.8620: a loss)
#include <gtest/gtest.h>

#include "context_probe/decision.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;

cp::Parameters two_families() {
  auto j = protocol_parameters("full");
  j["families"] = {"single", "multi-hop"};
  return cp::parse_parameters(j);  // budgets 32768, 131072, 262144, 524288, 1048576
}

void measure(cp::RunDigest& d, const std::string& family, std::int64_t length, const std::string& stratum,
             std::size_t passes, std::size_t valid) {
  auto& g = d.groups[{family, length, stratum}];
  g.results = valid;
  g.passes = passes;
}

TEST(Decision, HandComputedWilsonBoundsDecideLossAndRetention) {
  const auto p = two_families();
  cp::RunDigest d;
  // single/cold: 24/24, 22/24, 24/24, 10/24, 10/24 -> loss at 524,288, retained through 262,144.
  measure(d, "single", 32768, "cold", 24, 24);
  measure(d, "single", 131072, "cold", 22, 24);
  measure(d, "single", 262144, "cold", 24, 24);
  measure(d, "single", 524288, "cold", 10, 24);
  measure(d, "single", 1048576, "cold", 10, 24);
  // single/warm: everything 22/24 -> no loss, retained through 1,048,576.
  for (const auto l : p.lengths) measure(d, "single", l, "warm", 22, 24);
  // multi-hop/cold: the 131,072 budget has no valid measurement -> retained only through 32,768.
  measure(d, "multi-hop", 32768, "cold", 24, 24);
  measure(d, "multi-hop", 262144, "cold", 24, 24);
  // multi-hop/warm: base budget unmeasured -> nothing can be said.
  measure(d, "multi-hop", 131072, "warm", 24, 24);

  const auto decisions = cp::decide(p, d);
  ASSERT_EQ(decisions.size(), 4u);
  const auto& single_cold = decisions[0];
  EXPECT_EQ(single_cold.family, "single");
  EXPECT_EQ(single_cold.stratum, "cold");
  EXPECT_NEAR(single_cold.rates[0].wilson.low, 0.8620, 5e-4);
  EXPECT_NEAR(single_cold.rates[1].wilson.high, 0.9768, 5e-4);
  EXPECT_NEAR(single_cold.rates[3].wilson.high, 0.6116, 5e-4);
  EXPECT_EQ(single_cold.loss_at, 524288);
  EXPECT_EQ(single_cold.retained_through, 262144);

  const auto& single_warm = decisions[1];
  EXPECT_FALSE(single_warm.loss_at.has_value());
  EXPECT_EQ(single_warm.retained_through, 1048576);

  const auto& hop_cold = decisions[2];
  EXPECT_FALSE(hop_cold.loss_at.has_value());
  EXPECT_EQ(hop_cold.retained_through, 32768);

  const auto& hop_warm = decisions[3];
  EXPECT_FALSE(hop_warm.base_measured);
  EXPECT_FALSE(hop_warm.retained_through.has_value());

  EXPECT_EQ(cp::hypothesis_verdict(decisions), "supported");
}

TEST(Decision, NoLossIsNotSupportedAndNoBaseIsUndecided) {
  const auto p = two_families();
  cp::RunDigest d;
  for (const auto l : p.lengths) measure(d, "single", l, "cold", 23, 24);
  EXPECT_EQ(cp::hypothesis_verdict(cp::decide(p, d)), "not supported");
  EXPECT_EQ(cp::hypothesis_verdict(cp::decide(p, cp::RunDigest{})), "undecided");
}

TEST(Decision, ALowerRateAtTheBaseIsNeverALoss) {
  const auto p = two_families();
  cp::RunDigest d;
  measure(d, "single", 32768, "cold", 10, 24);
  measure(d, "single", 131072, "cold", 24, 24);
  const auto decisions = cp::decide(p, d);
  EXPECT_FALSE(decisions[0].loss_at.has_value());
  EXPECT_EQ(decisions[0].retained_through, 131072);
}

}  // namespace
}  // namespace k3lab::context_probe_test
