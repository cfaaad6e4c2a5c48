#include <gtest/gtest.h>

#include "k3lab/sim/stats.hpp"

namespace k3lab::sim {
namespace {

TEST(Stats, StudentTQuantilesMatchPublishedTables) {
  // Two-sided 95% critical values from standard t tables.
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.5706, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 19), 2.0930, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 19), -2.0930, 1e-4);
  EXPECT_NEAR(student_t_cdf(0.0, 7), 0.5, 1e-12);
  // df = 1 is the Cauchy distribution: P(T <= 1) = 3/4.
  EXPECT_NEAR(student_t_cdf(1.0, 1), 0.75, 1e-10);
}

TEST(Stats, MeanIntervalByHand) {
  // values 1..5: mean 3, sample sd sqrt(2.5), half-width t(0.975,4) * sd / sqrt(5) = 2.7764 * 0.70711.
  const MeanInterval m = mean_ci95({1, 2, 3, 4, 5});
  EXPECT_EQ(m.n, 5u);
  EXPECT_DOUBLE_EQ(m.mean, 3.0);
  EXPECT_NEAR(m.stddev, 1.5811388, 1e-6);
  EXPECT_NEAR(m.high - m.mean, 2.7764451 * 0.7071068, 1e-5);
  EXPECT_NEAR(m.mean - m.low, m.high - m.mean, 1e-12);
  const MeanInterval one = mean_ci95({4});
  EXPECT_EQ(one.low, 4);
  EXPECT_EQ(one.high, 4);
  EXPECT_EQ(mean_ci95({}).n, 0u);
}

TEST(Stats, NearestRankPercentiles) {
  std::vector<std::int64_t> v{50, 10, 40, 20, 30};
  EXPECT_EQ(nearest_rank_percentile(v, 0.5), 30);  // rank ceil(2.5) = 3
  EXPECT_EQ(nearest_rank_percentile(v, 0.2), 10);  // rank 1
  EXPECT_EQ(nearest_rank_percentile(v, 0.21), 20); // rank 2
  EXPECT_EQ(nearest_rank_percentile(v, 0.99), 50);
  std::vector<std::int64_t> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_EQ(nearest_rank_percentile(hundred, 0.9), 90);
  EXPECT_EQ(nearest_rank_percentile(hundred, 0.99), 99);
  std::vector<std::int64_t> empty;
  EXPECT_EQ(nearest_rank_percentile(empty, 0.5), 0);
}

}  // namespace
}  // namespace k3lab::sim
