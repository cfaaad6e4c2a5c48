#include <gtest/gtest.h>
#include <sched.h>

#include "k3lab/core/thread_policy.hpp"

using namespace k3lab;

namespace {

// Restores the calling thread's CPU affinity when the test ends.
class AffinityGuard {
 public:
  AffinityGuard() {
    CPU_ZERO(&saved_);
    sched_getaffinity(0, sizeof saved_, &saved_);
  }
  ~AffinityGuard() { sched_setaffinity(0, sizeof saved_, &saved_); }
  const cpu_set_t& saved() const { return saved_; }

 private:
  cpu_set_t saved_;
};

}  // namespace

TEST(ThreadPolicy, ExplicitThreadsWinAndZeroMeansTheAffinityCores) {
  const auto explicit_policy = core::choose_thread_policy(3);
  EXPECT_EQ(explicit_policy.threads, 3);
  EXPECT_EQ(explicit_policy.source, "--threads");
  const auto by_default = core::choose_thread_policy(0);
  EXPECT_EQ(by_default.threads, core::affinity_cores());
  EXPECT_EQ(by_default.source, "CPU affinity");
  EXPECT_EQ(core::choose_thread_policy(-2).threads, core::affinity_cores());
}

TEST(ThreadPolicy, AffinityCoresFollowTheAffinityMaskNotTheMachine) {
  AffinityGuard guard;
  EXPECT_EQ(core::affinity_cores(), CPU_COUNT(&guard.saved()));
  int first = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) first = CPU_ISSET(cpu, &guard.saved()) ? cpu : -1;
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(core::affinity_cores(), 1);
  EXPECT_EQ(core::choose_thread_policy(0).threads, 1);
}

TEST(ThreadPolicy, RecordNamesThreadsSourceAndTheWaitPolicyReadAtStart) {
  const auto j = core::choose_thread_policy(2).to_json();
  EXPECT_EQ(j.at("threads"), 2);
  EXPECT_EQ(j.at("source"), "--threads");
  EXPECT_EQ(j.at("openmp_wait_policy"), core::openmp_wait_policy());
  EXPECT_FALSE(core::openmp_wait_policy().empty());
}
