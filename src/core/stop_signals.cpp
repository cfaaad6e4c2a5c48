#include "k3lab/core/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <iterator>

namespace k3lab::core {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM};

volatile sig_atomic_t g_main_thread = 0;
struct sigaction g_before[std::size(kStopSignals)];  // the dispositions main started with

// Runs on a thread that does not block the signal; the main thread does, so it stays pending there.
// Only system calls: a handler may use nothing else.
extern "C" void forward_to_main_thread(int signal) {
  ::syscall(SYS_tgkill, ::getpid(), static_cast<pid_t>(g_main_thread), signal);
}

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal : kStopSignals) sigaddset(&set, signal);
  return set;
}

}  // namespace

void hold_stop_signals() {
  const sigset_t set = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  g_main_thread = static_cast<sig_atomic_t>(::syscall(SYS_gettid));
  struct sigaction forward {};
  forward.sa_handler = forward_to_main_thread;
  forward.sa_flags = SA_RESTART;
  sigemptyset(&forward.sa_mask);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    sigaction(kStopSignals[i], nullptr, &g_before[i]);
    // A signal the parent ignores (a shell's background job and SIGINT) stays ignored, as POSIX asks.
    if (g_before[i].sa_handler != SIG_IGN) sigaction(kStopSignals[i], &forward, nullptr);
  }
}

void release_stop_signals() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    struct sigaction current {};
    sigaction(kStopSignals[i], nullptr, &current);
    if (current.sa_handler == forward_to_main_thread) sigaction(kStopSignals[i], &g_before[i], nullptr);
  }
  const sigset_t set = stop_signal_set();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace k3lab::core
