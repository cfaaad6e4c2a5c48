#include <gtest/gtest.h>

#include "k3lab/sim/stats.hpp"

namespace k3lab::sim {
namespace {

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
