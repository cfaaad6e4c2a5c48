#include "k3lab/core/thread_policy.hpp"

#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace k3lab::core {
namespace {

// The value at start-up: set_passive below changes the environment only for the next execution.
const std::string& wait_policy_at_start() {
  static const std::string value = [] {
    const char* v = std::getenv("OMP_WAIT_POLICY");
    return std::string(v ? v : "unset");
  }();
  return value;
}

}  // namespace

nlohmann::json ThreadPolicy::to_json() const {
  return {{"threads", threads}, {"source", source}, {"openmp_wait_policy", openmp_wait_policy()}};
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

std::optional<std::string> restart_with_passive_openmp(char** argv) {
  if (wait_policy_at_start() != "unset") return std::nullopt;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return std::string("setenv failed: ") + std::strerror(errno);
  ::execv("/proc/self/exe", argv);
  const std::string reason = std::string("re-executing /proc/self/exe failed: ") + std::strerror(errno);
  ::unsetenv("OMP_WAIT_POLICY");  // the loaded runtime still spins; say so truthfully in the manifest
  return reason;
}

}  // namespace k3lab::core
