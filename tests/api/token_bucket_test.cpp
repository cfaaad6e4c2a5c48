// TokenBucket on virtual time: every wait is computed by hand from the rate and capacity.
#include <gtest/gtest.h>

#include "k3lab/api/token_bucket.hpp"

namespace k3lab::api {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

TEST(TokenBucket, BurstThenSteadyRate) {
  auto clock = std::make_shared<ManualClock>();
  TokenBucket bucket(2.0, 2.0, clock);  // 2 per second, burst 2
  EXPECT_EQ(bucket.acquire(1), nanoseconds(0));
  EXPECT_EQ(bucket.acquire(1), nanoseconds(0));
  EXPECT_EQ(bucket.acquire(1), milliseconds(500));  // deficit 1 at 2/s
  EXPECT_EQ(bucket.acquire(1), milliseconds(500));
  clock->advance(std::chrono::seconds(10));  // refills to capacity, not beyond
  EXPECT_DOUBLE_EQ(bucket.available(), 2.0);
  EXPECT_EQ(bucket.acquire(2), nanoseconds(0));
  EXPECT_EQ(bucket.acquire(0.5), milliseconds(250));
}

TEST(TokenBucket, LargerThanCapacityWaitsProportionally) {
  auto clock = std::make_shared<ManualClock>();
  TokenBucket bucket(1000.0, 500.0, clock);  // a tokens-per-second budget
  EXPECT_EQ(bucket.acquire(2500), milliseconds(2000));  // 500 in hand, 2000 owed at 1000/s
  EXPECT_EQ(bucket.acquire(100), milliseconds(100));    // the debt was paid by the wait; 100 more
  const auto sleeps = clock->sleeps();
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[0], milliseconds(2000));
}

TEST(TokenBucket, RejectsBadArguments) {
  auto clock = std::make_shared<ManualClock>();
  EXPECT_THROW(TokenBucket(0, 1, clock), std::invalid_argument);
  EXPECT_THROW(TokenBucket(1, 0, clock), std::invalid_argument);
  EXPECT_THROW(TokenBucket(1, 1, nullptr), std::invalid_argument);
  TokenBucket ok(1, 1, clock);
  EXPECT_THROW(ok.acquire(-1), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
