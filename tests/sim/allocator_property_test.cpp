// Property tests: random admit/grow/release sequences from a seeded generator against each
// allocator, checking after every step the allocator's own invariants (no overlap, no leak,
// free + used = total) and an independent reference model of what each owner holds.
#include <map>

#include <gtest/gtest.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/sim/fixed_split_pool.hpp"
#include "k3lab/sim/padded_pool.hpp"
#include "k3lab/sim/unified_arena.hpp"

namespace k3lab::sim {
namespace {

struct Reference {
  std::map<std::uint32_t, std::uint64_t> units;  // owner -> KV units held (pages or blocks)
};

// Reference admission/growth predicates and used bytes, written from the policy definitions.
struct FixedModel {
  FixedSplitPool::Geometry g;
  std::uint64_t kv_used(const Reference& r) const {
    std::uint64_t n = 0;
    for (const auto& [o, u] : r.units) n += u;
    return n;
  }
  bool admits(const Reference& r, std::uint32_t pages) const {
    return r.units.size() < g.state_slots && kv_used(r) + pages + g.watermark_pages <= g.kv_pages;
  }
  bool grows(const Reference& r) const { return kv_used(r) < g.kv_pages; }
  Bytes used(const Reference& r) const {
    return static_cast<Bytes>(r.units.size()) * g.state_bytes + static_cast<Bytes>(kv_used(r)) * g.page_bytes;
  }
  std::uint64_t grow_units() const { return 1; }
};

struct UnifiedModel {
  UnifiedArena::Geometry g;
  Bytes used(const Reference& r) const {
    Bytes b = 0;
    for (const auto& [o, u] : r.units) b += g.state_bytes + static_cast<Bytes>(u) * g.page_bytes;
    return b;
  }
  bool admits(const Reference& r, std::uint32_t pages) const {
    return g.total_bytes - used(r) >= g.state_bytes + static_cast<Bytes>(pages) * g.page_bytes + g.watermark_bytes;
  }
  bool grows(const Reference& r) const { return g.total_bytes - used(r) >= g.page_bytes; }
  std::uint64_t grow_units() const { return 1; }
};

struct PaddedModel {
  PaddedPool::Geometry g;
  std::uint64_t blocks(const Reference& r) const {
    std::uint64_t n = 0;
    for (const auto& [o, u] : r.units) n += u + g.state_blocks;
    return n;
  }
  bool admits(const Reference& r, std::uint32_t pages) const {
    return blocks(r) + static_cast<std::uint64_t>(pages) * g.kv_groups + g.state_blocks + g.watermark_blocks <= g.total_blocks;
  }
  bool grows(const Reference& r) const { return blocks(r) + g.kv_groups <= g.total_blocks; }
  Bytes used(const Reference& r) const { return static_cast<Bytes>(blocks(r)) * g.block_bytes; }
  std::uint64_t grow_units() const { return g.kv_groups; }
};

template <class Pool, class Model>
void run_random_sequence(Pool& pool, const Model& model, std::uint64_t seed, int steps, std::uint32_t max_pages) {
  core::Rng rng(seed);
  Reference ref;
  std::uint32_t next_owner = 0;
  for (int step = 0; step < steps; ++step) {
    const int op = static_cast<int>(rng.below(10));
    if (op < 4) {
      const auto pages = static_cast<std::uint32_t>(rng.below(max_pages + 1));
      const bool expected = model.admits(ref, pages);
      ASSERT_EQ(pool.check_admit(pages) == Shortage::None, expected) << "step " << step;
      if (expected) {
        // Reuse ids the way the engine does: the lowest owner id that is free.
        std::uint32_t owner = 0;
        while (ref.units.count(owner)) ++owner;
        next_owner = std::max(next_owner, owner + 1);
        pool.admit(owner, pages);
        ref.units[owner] = static_cast<std::uint64_t>(pages) * model.grow_units();
      } else {
        EXPECT_THROW(pool.admit(next_owner + 1000, pages), std::logic_error);
      }
    } else if (op < 8 && !ref.units.empty()) {
      auto it = ref.units.begin();
      std::advance(it, static_cast<long>(rng.below(ref.units.size())));
      const bool expected = model.grows(ref);
      ASSERT_EQ(pool.grow(it->first), expected) << "step " << step;
      if (expected) it->second += model.grow_units();
    } else if (!ref.units.empty()) {
      auto it = ref.units.begin();
      std::advance(it, static_cast<long>(rng.below(ref.units.size())));
      pool.release(it->first);
      ref.units.erase(it);
    }
    ASSERT_NO_THROW(pool.check_invariants()) << "step " << step;
    ASSERT_EQ(pool.used_bytes(), model.used(ref)) << "step " << step;
    ASSERT_EQ(pool.free_bytes() + pool.used_bytes(), pool.total_bytes());
    Bytes located = 0;
    for (Bytes b : pool.free_by_location()) located += b;
    ASSERT_EQ(located, pool.free_bytes());
  }
  while (!ref.units.empty()) {
    pool.release(ref.units.begin()->first);
    ref.units.erase(ref.units.begin());
  }
  pool.check_invariants();
  EXPECT_EQ(pool.used_bytes(), 0);
  EXPECT_EQ(pool.free_bytes(), pool.total_bytes());
}

TEST(AllocatorProperty, FixedSplitKeepsItsInvariants) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto g = FixedSplitPool::split(1000, 37, 8, 4, 0.7 + 0.05 * static_cast<double>(seed), 0.05);
    FixedSplitPool pool(g);
    run_random_sequence(pool, FixedModel{g}, seed, 1500, 12);
  }
}

TEST(AllocatorProperty, UnifiedArenaKeepsItsInvariantsOnShortfall) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    UnifiedArena::Geometry g;
    g.total_bytes = 997 + static_cast<Bytes>(seed);  // slivers that fit no unit
    g.state_bytes = 37;
    g.page_bytes = 8;
    g.page_tokens = 4;
    g.watermark_bytes = static_cast<Bytes>(seed % 3) * 8;
    UnifiedArena pool(g);
    run_random_sequence(pool, UnifiedModel{g}, seed, 1500, 12);
  }
}

TEST(AllocatorProperty, UnifiedArenaKeepsItsInvariantsWhenEager) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    UnifiedArena::Geometry g;
    g.total_bytes = 1003;
    g.state_bytes = 37;
    g.page_bytes = 8;
    g.page_tokens = 4;
    g.compaction = CompactionMode::Eager;
    UnifiedArena pool(g);
    run_random_sequence(pool, UnifiedModel{g}, seed + 100, 1500, 12);
  }
}

TEST(AllocatorProperty, UnifiedArenaWithStatesSmallerThanPages) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    UnifiedArena::Geometry g;
    g.total_bytes = 1000;
    g.state_bytes = 3;
    g.page_bytes = 16;
    g.page_tokens = 16;
    UnifiedArena pool(g);
    run_random_sequence(pool, UnifiedModel{g}, seed + 200, 1500, 6);
  }
}

TEST(AllocatorProperty, PaddedPoolKeepsItsInvariants) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    PaddedPool::Geometry g;
    g.budget_bytes = 1000;
    g.block_tokens = 16;
    g.block_bytes = 24;
    g.state_blocks = 1 + static_cast<std::uint32_t>(seed % 3);
    g.kv_groups = 1 + static_cast<std::uint32_t>(seed % 2);
    g.total_blocks = 41;
    g.watermark_blocks = static_cast<std::uint32_t>(seed % 2);
    PaddedPool pool(g);
    run_random_sequence(pool, PaddedModel{g}, seed + 300, 1500, 6);
  }
}

TEST(AllocatorProperty, CompactionMovesOnlyWhatTheShortfallNeeds) {
  // With on-shortfall compaction, an arena that never runs short never moves a byte.
  UnifiedArena::Geometry g;
  g.total_bytes = 100000;
  g.state_bytes = 37;
  g.page_bytes = 8;
  g.page_tokens = 4;
  UnifiedArena pool(g);
  run_random_sequence(pool, UnifiedModel{g}, 7, 800, 12);
  EXPECT_EQ(pool.bytes_moved(), 0);
}

}  // namespace
}  // namespace k3lab::sim
