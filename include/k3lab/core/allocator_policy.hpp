#pragma once
// How the process's heap gives memory back (glibc malloc; docs/dependencies.md says why these settings
// and not another allocator). An API run builds a prompt of several megabytes per unit on one thread and
// the embedded mock server reads it on others; with glibc's default of up to eight arenas per core each
// thread's freed buffers stay in its own arena: measured 439 MB peak RSS after 30 units at 1,048,576
// tokens, 212 MB with one arena. So: one arena for every thread, and a trim between units that gives the
// heap's free pages back.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct AllocatorPolicy {
  int arena_max = 1;     // M_ARENA_MAX: every thread allocates from one heap
  bool applied = false;  // false: not glibc, or the user's MALLOC_* settings stand
  std::string source;    // "k3lab" or why it was not applied

  // {allocator, arena_max, applied, source}: what a manifest or benchmark records.
  nlohmann::json to_json() const;
};

// Sets glibc malloc to `policy` unless the user chose settings (MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_
// or a glibc.malloc tunable in GLIBC_TUNABLES): call once at start-up, before other threads exist.
// Returns the policy with `applied` and `source` filled in.
AllocatorPolicy apply_allocator_policy(AllocatorPolicy policy = {});

// The policy this process runs under (what the last apply_allocator_policy returned; not applied before).
const AllocatorPolicy& allocator_policy();

// Gives the free pages of every arena back to the system (malloc_trim). Called between units, where a
// unit's buffers are gone; returns whether glibc released any memory.
bool release_free_memory();

}  // namespace k3lab::core
