// The shared retry policy: one cap over every retryable class, Retry-After capped, exponential
// backoff with seeded jitter inside its band.
#include <gtest/gtest.h>

#include <set>

#include "k3lab/api/retry_policy.hpp"

namespace k3lab::api {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST(RetryPolicy, OneCapForEveryRetryableClass) {
  const RetryPolicy policy = RetryPolicy::with_retries(2);
  EXPECT_EQ(policy.max_sends, 3);
  for (ErrorClass c : {ErrorClass::transport, ErrorClass::server, ErrorClass::rate_limit, ErrorClass::overload}) {
    EXPECT_TRUE(policy.may_retry(c, 1)) << to_string(c);
    EXPECT_TRUE(policy.may_retry(c, 2)) << to_string(c);
    EXPECT_FALSE(policy.may_retry(c, 3)) << to_string(c) << ": a fourth send";
  }
  for (ErrorClass c : {ErrorClass::auth, ErrorClass::quota, ErrorClass::invalid_request, ErrorClass::content_filter,
                       ErrorClass::not_found, ErrorClass::unknown, ErrorClass::none}) {
    EXPECT_FALSE(policy.may_retry(c, 1)) << to_string(c);
  }
  EXPECT_FALSE(RetryPolicy::with_retries(0).may_retry(ErrorClass::transport, 1));
}

TEST(RetryPolicy, ExactBackoffDoublesUpToItsCap) {
  RetryPolicy policy;
  policy.jitter = 0;
  policy.backoff_initial = milliseconds(250);
  policy.backoff_max = milliseconds(1500);
  const nanoseconds expected[] = {milliseconds(250), milliseconds(500), milliseconds(1000), milliseconds(1500),
                                  milliseconds(1500)};
  for (int sends = 1; sends <= 5; ++sends) {
    EXPECT_EQ(policy.wait_before_next(sends, std::nullopt, 0), expected[sends - 1]) << "after " << sends << " sends";
  }
}

TEST(RetryPolicy, RetryAfterWinsButIsCapped) {
  RetryPolicy policy;
  policy.retry_after_cap = seconds(60);
  EXPECT_EQ(policy.wait_before_next(1, seconds(3), 9), seconds(3));
  EXPECT_EQ(policy.wait_before_next(2, seconds(1152), 9), seconds(60));
  EXPECT_EQ(policy.wait_before_next(1, nanoseconds(0), 9), nanoseconds(0));
}

TEST(RetryPolicy, JitterStaysInItsBandIsSeededAndSpreadsRequests) {
  RetryPolicy policy;  // 1 s, jitter 0.5: [500 ms, 1 s]
  std::set<std::int64_t> distinct;
  for (std::uint64_t key = 0; key < 200; ++key) {
    const nanoseconds wait = policy.wait_before_next(1, std::nullopt, key);
    EXPECT_GE(wait, milliseconds(500));
    EXPECT_LE(wait, seconds(1));
    EXPECT_EQ(wait, policy.wait_before_next(1, std::nullopt, key)) << "the same key drew another wait";
    distinct.insert(wait.count());
  }
  EXPECT_GT(distinct.size(), 150u) << "requests should not retry in lockstep";
  RetryPolicy other = policy;
  other.seed = 1;
  int differing = 0;
  for (std::uint64_t key = 0; key < 20; ++key) {
    differing += other.wait_before_next(1, std::nullopt, key) != policy.wait_before_next(1, std::nullopt, key);
  }
  EXPECT_GT(differing, 15);
}

TEST(RetryPolicy, RejectsNonsense) {
  RetryPolicy p;
  p.max_sends = 0;
  EXPECT_THROW(p.check(), std::invalid_argument);
  p = RetryPolicy{};
  p.jitter = 1.5;
  EXPECT_THROW(p.check(), std::invalid_argument);
  p = RetryPolicy{};
  p.backoff_max = milliseconds(1);
  EXPECT_THROW(p.check(), std::invalid_argument);
  EXPECT_NO_THROW(RetryPolicy{}.check());
}

}  // namespace
}  // namespace k3lab::api
