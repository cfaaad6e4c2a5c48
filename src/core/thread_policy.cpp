#include "k3lab/core/thread_policy.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace k3lab::core {
namespace {

// The values at start-up: the restart below changes the environment only for the next execution.
std::string variable_or_unset(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "unset";
}

const std::string& wait_policy_at_start() {
  static const std::string value = variable_or_unset("OMP_WAIT_POLICY");
  return value;
}

const std::string& spin_count_at_start() {
  static const std::string value = variable_or_unset("GOMP_SPINCOUNT");
  return value;
}

// A short spin (libgomp's own default is 300,000 iterations, "active" spins for ever): long enough to
// bridge the gap between two small LibTorch operators (a passive worker's futex wake-up cost about 70 us
// per parallel region: a 65,536-element mul took 85 us at 2 threads against 13 us at 1), short enough to
// leave the core to OpenBLAS's threads during a long product. The best of 3,000 to 1,000,000 measured in
// docs/benchmarks.md ("OpenMP's spin before sleeping").
constexpr const char* kSpinCount = "10000";

}  // namespace

nlohmann::json ThreadPolicy::to_json() const {
  return {{"threads", threads},
          {"source", source},
          {"openmp_wait_policy", openmp_wait_policy()},
          {"openmp_spin_count", openmp_spin_count()}};
}

int affinity_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}

ThreadPolicy choose_thread_policy(int requested) {
  if (requested > 0) return {requested, "--threads"};
  return {affinity_cores(), "CPU affinity"};
}

std::string openmp_wait_policy() { return wait_policy_at_start(); }

std::string openmp_spin_count() { return spin_count_at_start(); }

std::optional<std::string> restart_with_passive_openmp(char** argv) {
  if (wait_policy_at_start() != "unset") return std::nullopt;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0 || ::setenv("GOMP_SPINCOUNT", kSpinCount, 0) != 0) {
    return std::string("setenv failed: ") + std::strerror(errno);
  }
  ::execv("/proc/self/exe", argv);
  const std::string reason = std::string("re-executing /proc/self/exe failed: ") + std::strerror(errno);
  ::unsetenv("OMP_WAIT_POLICY");  // the loaded runtime still spins; say so truthfully in the manifest
  if (spin_count_at_start() == "unset") ::unsetenv("GOMP_SPINCOUNT");
  return reason;
}

}  // namespace k3lab::core
