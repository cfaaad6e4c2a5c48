// The page's seed mean and Student-t 95% interval, against a hand computation.
#include <gtest/gtest.h>

#include <cmath>

#include "memory_pool/mean_interval.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

TEST(MeanInterval, ByHand) {
  // values 1..5: mean 3, sample sd sqrt(2.5), half-width t(0.975,4) * sd / sqrt(5) = 2.7764451 * 0.7071068.
  const MeanInterval m = mean_ci95({1, 2, 3, 4, 5});
  EXPECT_EQ(m.n, 5u);
  EXPECT_DOUBLE_EQ(m.mean, 3.0);
  EXPECT_NEAR(m.stddev, 1.5811388, 1e-6);
  EXPECT_NEAR(m.high - m.mean, 2.7764451 * 0.7071068, 1e-5);
  EXPECT_NEAR(m.mean - m.low, m.high - m.mean, 1e-12);
  // Two values: t(0.975, 1) = 12.7062 (the Cauchy quantile tan(0.475 pi)).
  const MeanInterval two = mean_ci95({1, 3});
  EXPECT_NEAR(two.high - two.mean, 12.7062047, 1e-6);  // sd sqrt(2) over sqrt(2)
  const MeanInterval one = mean_ci95({4});
  EXPECT_EQ(one.low, 4);
  EXPECT_EQ(one.high, 4);
  EXPECT_EQ(one.stddev, 0);
  EXPECT_EQ(mean_ci95({}).n, 0u);
  EXPECT_THROW(mean_ci95({1, std::nan("")}), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::experiments::memory_pool
