// core::hold_stop_signals / release_stop_signals: a stop that arrives while main holds them waits for the
// command's handler, even when another thread is the one the kernel hands it to; a disposition the process
// started with comes back on release.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <thread>

#include "k3lab/core/stop_signals.hpp"

namespace {

std::atomic<int> g_stops_seen{0};
extern "C" void count_stop(int) { g_stops_seen.fetch_add(1); }

void (*disposition(int signal))(int) {
  struct sigaction current {};
  sigaction(signal, nullptr, &current);
  return current.sa_handler;
}

// Restores the dispositions and the mask a test changed, whatever it asserted.
class StopSignals : public ::testing::Test {
 protected:
  void SetUp() override {
    sigaction(SIGINT, nullptr, &int_before_);
    sigaction(SIGTERM, nullptr, &term_before_);
    pthread_sigmask(SIG_SETMASK, nullptr, &mask_before_);
    g_stops_seen = 0;
  }
  void TearDown() override {
    sigaction(SIGINT, &int_before_, nullptr);
    sigaction(SIGTERM, &term_before_, nullptr);
    pthread_sigmask(SIG_SETMASK, &mask_before_, nullptr);
  }

 private:
  struct sigaction int_before_ {};
  struct sigaction term_before_ {};
  sigset_t mask_before_{};
};

TEST_F(StopSignals, ASigtermSentWhileHeldReachesTheHandlerInstalledBeforeTheRelease) {
  signal(SIGTERM, SIG_DFL);
  k3lab::core::hold_stop_signals();
  // A thread started after the hold inherits the block; one started before it would take the signal and
  // forward it: a process-directed kill from another thread covers the delivery either way.
  std::thread([] { kill(getpid(), SIGTERM); }).join();
  EXPECT_EQ(g_stops_seen.load(), 0);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_TRUE(sigismember(&pending, SIGTERM)) << "the stop must wait, pending, for the release";
  signal(SIGTERM, count_stop);
  k3lab::core::release_stop_signals();
  EXPECT_EQ(g_stops_seen.load(), 1);
  EXPECT_EQ(disposition(SIGTERM), &count_stop) << "the command's handler stays installed";
}

TEST_F(StopSignals, AThreadThatDoesNotBlockTheSignalForwardsItToMain) {
  signal(SIGTERM, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  // Started before the hold with nothing blocked, like a library's pool started before main.
  std::thread early([&] {
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    while (!go.load()) std::this_thread::yield();
    pthread_kill(pthread_self(), SIGTERM);  // thread-directed: only this thread may take it
    done = true;
  });
  k3lab::core::hold_stop_signals();
  go = true;
  early.join();
  ASSERT_TRUE(done.load()) << "the thread survived: the signal did not take its default action";
  sigset_t pending;
  sigpending(&pending);
  EXPECT_TRUE(sigismember(&pending, SIGTERM)) << "forwarded to the main thread, which holds it";
  signal(SIGTERM, count_stop);
  k3lab::core::release_stop_signals();
  EXPECT_EQ(g_stops_seen.load(), 1);
}

TEST_F(StopSignals, TheReleaseRestoresWhatTheProcessStartedWithAndKeepsAnIgnoredSignalIgnored) {
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_DFL);
  k3lab::core::hold_stop_signals();
  EXPECT_EQ(disposition(SIGINT), SIG_IGN);
  EXPECT_NE(disposition(SIGTERM), SIG_DFL) << "held: a forwarder catches it";
  k3lab::core::release_stop_signals();
  EXPECT_EQ(disposition(SIGINT), SIG_IGN);
  EXPECT_EQ(disposition(SIGTERM), SIG_DFL);
  sigset_t mask;
  pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  EXPECT_FALSE(sigismember(&mask, SIGTERM));
  EXPECT_FALSE(sigismember(&mask, SIGINT));
}

}  // namespace
