#include "k3lab/core/allocator_policy.hpp"

#include <cstdlib>
#include <string_view>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace k3lab::core {
namespace {

AllocatorPolicy& current_policy() {
  static AllocatorPolicy policy{0, false, "not applied"};
  return policy;
}

// The user's own malloc settings win over k3lab's: the name of the first one set, or "".
std::string user_malloc_setting() {
  for (const char* name : {"MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"}) {
    if (std::getenv(name)) return name;
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) {
    return "GLIBC_TUNABLES";
  }
  return "";
}

}  // namespace

nlohmann::json AllocatorPolicy::to_json() const {
  return {{"allocator", "glibc malloc"}, {"arena_max", arena_max}, {"applied", applied}, {"source", source}};
}

AllocatorPolicy apply_allocator_policy(AllocatorPolicy policy) {
#if defined(__GLIBC__)
  if (const auto setting = user_malloc_setting(); !setting.empty()) {
    policy.applied = false;
    policy.source = "the user's " + setting + " (k3lab's policy not applied)";
  } else {
    // Not M_MMAP_THRESHOLD: a fixed 1 MiB threshold (every prompt buffer mapped and unmapped) was measured
    // at twice the CPU time of a run for 6% less memory (docs/benchmarks.md).
    policy.applied = mallopt(M_ARENA_MAX, policy.arena_max) == 1;
    policy.source = policy.applied ? "k3lab" : "glibc refused mallopt";
  }
#else
  policy.applied = false;
  policy.source = "not glibc: the C library's defaults";
#endif
  current_policy() = policy;
  return policy;
}

const AllocatorPolicy& allocator_policy() { return current_policy(); }

bool release_free_memory() {
#if defined(__GLIBC__)
  return malloc_trim(0) == 1;
#else
  return false;
#endif
}

}  // namespace k3lab::core
