#pragma once
// Policy (b): one byte arena shared by both memory types, in SGLang's unified-memory layout. MLA
// pages grow up from address 0, KDA state envelopes grow down from the end, and the gap between
// them belongs to whoever needs it. Freed units leave holes that are reused first (lowest address
// for pages, highest for states). When an allocation finds no hole and too small a gap, the
// other region is compacted: its live units nearest the gap move into its holes until the gap is
// large enough. Every moved byte is counted. "Eager" mode instead compacts after every free, so a
// region never keeps holes.
#include <cstdint>
#include <string>
#include <vector>

#include "k3lab/sim/hole_set.hpp"
#include "k3lab/sim/pool_types.hpp"

namespace k3lab::sim {

enum class CompactionMode : std::uint8_t { OnShortfall, Eager };
std::string compaction_mode_name(CompactionMode mode);
CompactionMode parse_compaction_mode(const std::string& name);

class UnifiedArena {
 public:
  struct Geometry {
    Bytes total_bytes = 0;
    Bytes state_bytes = 0;
    Bytes page_bytes = 0;
    std::uint32_t page_tokens = 0;
    Bytes watermark_bytes = 0;  // kept free at admission for decode growth
    CompactionMode compaction = CompactionMode::OnShortfall;
  };

  explicit UnifiedArena(const Geometry& geometry);

  static constexpr const char* kLocationNames[kMaxLocations] = {"arena-gap", "kv-holes", "state-holes"};
  static constexpr int kLocations = 3;

  const Geometry& geometry() const { return geometry_; }
  std::uint32_t page_tokens() const { return geometry_.page_tokens; }

  // Every free byte can be reached by compaction, so a request fits exactly when the free bytes
  // cover its state, its prompt pages and the watermark.
  Shortage check_admit(std::uint32_t pages) const {
    return free_bytes() >= need_bytes(pages) + geometry_.watermark_bytes ? Shortage::None : Shortage::Shared;
  }
  bool fits_when_empty(std::uint32_t pages) const {
    return need_bytes(pages) + geometry_.watermark_bytes <= geometry_.total_bytes;
  }
  void admit(std::uint32_t owner, std::uint32_t pages);
  bool grow(std::uint32_t owner);
  void release(std::uint32_t owner);

  Bytes total_bytes() const { return geometry_.total_bytes; }
  Bytes used_bytes() const {
    return static_cast<Bytes>(live_pages_) * geometry_.page_bytes +
           static_cast<Bytes>(live_states_) * geometry_.state_bytes;
  }
  Bytes free_bytes() const { return total_bytes() - used_bytes(); }
  Bytes gap_bytes() const {
    return geometry_.total_bytes - static_cast<Bytes>(kv_count_) * geometry_.page_bytes -
           static_cast<Bytes>(state_count_) * geometry_.state_bytes;
  }
  LocationBytes free_by_location() const {
    return {gap_bytes(), static_cast<Bytes>(kv_holes_.size()) * geometry_.page_bytes,
            static_cast<Bytes>(state_holes_.size()) * geometry_.state_bytes};
  }

  std::uint32_t pages_of(std::uint32_t owner) const {
    return owner < owners_.size() ? static_cast<std::uint32_t>(owners_[owner].pages.size()) : 0;
  }
  bool has_state(std::uint32_t owner) const { return owner < owners_.size() && owners_[owner].state != kNoOwner; }
  // Positions, for tests and traces: page index from address 0, state slot index from the arena end.
  std::vector<std::uint32_t> page_positions(std::uint32_t owner) const {
    return owner < owners_.size() ? owners_[owner].pages : std::vector<std::uint32_t>{};
  }
  std::uint32_t state_slot(std::uint32_t owner) const { return owner < owners_.size() ? owners_[owner].state : kNoOwner; }
  std::uint32_t kv_region_pages() const { return kv_count_; }
  std::uint32_t state_region_slots() const { return state_count_; }
  Bytes bytes_moved() const { return bytes_moved_; }
  std::uint64_t moves() const { return moves_; }

  void check_invariants() const;

 private:
  struct Owner {
    std::uint32_t state = kNoOwner;     // state slot index, counted from the arena's end
    std::vector<std::uint32_t> pages;   // page positions, counted from address 0
  };

  Bytes need_bytes(std::uint32_t pages) const {
    return geometry_.state_bytes + static_cast<Bytes>(pages) * geometry_.page_bytes;
  }
  void ensure_owner(std::uint32_t owner) {
    if (owner >= owners_.size()) owners_.resize(owner + 1);
  }
  void alloc_state(std::uint32_t owner);
  void alloc_pages(std::uint32_t owner, std::uint32_t count);
  // Move live units of one region into its own holes until the gap holds `gap_needed` bytes.
  void compact_kv_until_gap(Bytes gap_needed);
  void compact_states_until_gap(Bytes gap_needed);
  void retreat_edges();
  void compact_everything();

  Geometry geometry_;
  std::uint32_t kv_capacity_ = 0;
  std::uint32_t state_capacity_ = 0;
  std::uint32_t kv_count_ = 0;     // pages in the KV region [0, kv_count_), live or hole
  std::uint32_t state_count_ = 0;  // slots in the state region, live or hole
  std::uint32_t live_pages_ = 0;
  std::uint32_t live_states_ = 0;
  std::vector<std::uint32_t> page_owner_;   // per page position
  std::vector<std::uint32_t> state_owner_;  // per state slot
  HoleSet kv_holes_;
  HoleSet state_holes_;
  std::vector<Owner> owners_;
  Bytes bytes_moved_ = 0;
  std::uint64_t moves_ = 0;
};

}  // namespace k3lab::sim
