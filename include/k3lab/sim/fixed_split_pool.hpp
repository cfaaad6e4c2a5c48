#pragma once
// Policy (a): two pools split once at start-up, SGLang's default for hybrid models. The state pool
// holds whole KDA state slots, the KV pool holds MLA pages; neither can lend to the other.
#include <cstdint>
#include <string>
#include <vector>

#include "k3lab/sim/pool_types.hpp"
#include "k3lab/sim/unit_pool.hpp"

namespace k3lab::sim {

class FixedSplitPool {
 public:
  struct Geometry {
    Bytes budget_bytes = 0;
    Bytes state_bytes = 0;          // one request's KDA state (all KDA layers)
    Bytes page_bytes = 0;           // one MLA page (page_tokens tokens, all MLA layers)
    std::uint32_t page_tokens = 0;
    std::uint32_t state_slots = 0;
    std::uint32_t kv_pages = 0;
    std::uint32_t watermark_pages = 0;  // KV pages kept free at admission for decode growth

    Bytes state_pool_bytes() const { return static_cast<Bytes>(state_slots) * state_bytes; }
    Bytes kv_pool_bytes() const { return static_cast<Bytes>(kv_pages) * page_bytes; }
    // Budget bytes that fit neither pool's unit size (never allocatable).
    Bytes rounding_bytes() const { return budget_bytes - state_pool_bytes() - kv_pool_bytes(); }
  };

  // SGLang sizing: the state pool gets ratio/(1+ratio) of the budget (--mamba-full-memory-ratio),
  // rounded down to whole slots; the KV pool gets the rest, rounded down to whole pages.
  static Geometry split(Bytes budget_bytes, Bytes state_bytes, Bytes page_bytes, std::uint32_t page_tokens,
                        double state_to_kv_ratio, double watermark_fraction);

  explicit FixedSplitPool(const Geometry& geometry);

  static constexpr const char* kLocationNames[kMaxLocations] = {"state-pool", "kv-pool", ""};
  static constexpr int kLocations = 2;

  const Geometry& geometry() const { return geometry_; }
  std::uint32_t page_tokens() const { return geometry_.page_tokens; }

  Shortage check_admit(std::uint32_t pages) const {
    const bool state_short = states_.free_units() < 1;
    const bool kv_short = static_cast<std::uint64_t>(kv_.free_units()) <
                          static_cast<std::uint64_t>(pages) + geometry_.watermark_pages;
    if (state_short && kv_short) return Shortage::BothPools;
    if (state_short) return Shortage::StatePool;
    if (kv_short) return Shortage::KvPool;
    return Shortage::None;
  }
  bool fits_when_empty(std::uint32_t pages) const {
    return geometry_.state_slots >= 1 &&
           static_cast<std::uint64_t>(pages) + geometry_.watermark_pages <= geometry_.kv_pages;
  }
  // Precondition: check_admit(pages) == None.
  void admit(std::uint32_t owner, std::uint32_t pages);
  bool grow(std::uint32_t owner) { return kv_.alloc(owner); }
  void release(std::uint32_t owner) {
    states_.release_all(owner);
    kv_.release_all(owner);
  }

  Bytes total_bytes() const { return geometry_.state_pool_bytes() + geometry_.kv_pool_bytes(); }
  Bytes used_bytes() const {
    return static_cast<Bytes>(states_.used_units()) * geometry_.state_bytes +
           static_cast<Bytes>(kv_.used_units()) * geometry_.page_bytes;
  }
  Bytes free_bytes() const { return total_bytes() - used_bytes(); }
  LocationBytes free_by_location() const {
    return {static_cast<Bytes>(states_.free_units()) * geometry_.state_bytes,
            static_cast<Bytes>(kv_.free_units()) * geometry_.page_bytes, 0};
  }
  std::uint32_t pages_of(std::uint32_t owner) const { return kv_.owned_count(owner); }
  std::uint32_t states_of(std::uint32_t owner) const { return states_.owned_count(owner); }
  Bytes bytes_moved() const { return 0; }
  std::uint64_t moves() const { return 0; }

  // Throws std::logic_error on any broken invariant (leak, double ownership, overlap, accounting).
  void check_invariants() const;

 private:
  Geometry geometry_;
  UnitPool states_;
  UnitPool kv_;
};

}  // namespace k3lab::sim
