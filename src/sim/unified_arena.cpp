#include "k3lab/sim/unified_arena.hpp"

#include <algorithm>
#include <stdexcept>

#include "k3lab/sim/unit_pool.hpp"

namespace k3lab::sim {

std::string compaction_mode_name(CompactionMode mode) {
  return mode == CompactionMode::Eager ? "eager" : "on-shortfall";
}

CompactionMode parse_compaction_mode(const std::string& name) {
  if (name == "on-shortfall") return CompactionMode::OnShortfall;
  if (name == "eager") return CompactionMode::Eager;
  throw std::invalid_argument("unknown compaction mode \"" + name + "\": use on-shortfall or eager");
}

UnifiedArena::UnifiedArena(const Geometry& geometry) : geometry_(geometry) {
  if (geometry.total_bytes <= 0 || geometry.state_bytes <= 0 || geometry.page_bytes <= 0 ||
      geometry.page_tokens == 0) {
    throw std::invalid_argument("unified arena: total, state size, page size and page tokens must be positive");
  }
  kv_capacity_ = static_cast<std::uint32_t>(geometry.total_bytes / geometry.page_bytes);
  state_capacity_ = static_cast<std::uint32_t>(geometry.total_bytes / geometry.state_bytes);
  page_owner_.assign(kv_capacity_, kNoOwner);
  state_owner_.assign(state_capacity_, kNoOwner);
  kv_holes_.reset(kv_capacity_);
  state_holes_.reset(state_capacity_);
}

void UnifiedArena::admit(std::uint32_t owner, std::uint32_t pages) {
  if (check_admit(pages) != Shortage::None) {
    throw std::logic_error("UnifiedArena::admit called for a request that does not fit");
  }
  ensure_owner(owner);
  if (owners_[owner].state != kNoOwner) throw std::logic_error("UnifiedArena::admit: owner already holds a state");
  alloc_state(owner);
  alloc_pages(owner, pages);
}

bool UnifiedArena::grow(std::uint32_t owner) {
  // Refuse before moving anything: compaction only runs when it will succeed.
  if (free_bytes() < geometry_.page_bytes) return false;
  ensure_owner(owner);
  alloc_pages(owner, 1);
  return true;
}

void UnifiedArena::alloc_state(std::uint32_t owner) {
  std::uint32_t slot;
  if (!state_holes_.empty()) {
    slot = state_holes_.lowest();
    state_holes_.erase(slot);
  } else {
    if (gap_bytes() < geometry_.state_bytes) compact_kv_until_gap(geometry_.state_bytes);
    if (gap_bytes() < geometry_.state_bytes) throw std::logic_error("unified arena: no room for a state after compaction");
    slot = state_count_++;
  }
  state_owner_[slot] = owner;
  owners_[owner].state = slot;
  ++live_states_;
}

void UnifiedArena::alloc_pages(std::uint32_t owner, std::uint32_t count) {
  // Holes first (lowest address first), then the gap, compacting the state region only for the
  // pages the holes and the gap cannot take. Same placement as taking the pages one at a time.
  auto& pages = owners_[owner].pages;
  const std::uint32_t from_holes = kv_holes_.take_lowest(count, [&](std::uint32_t pos) {
    page_owner_[pos] = owner;
    pages.push_back(pos);
  });
  const std::uint32_t from_gap = count - from_holes;
  if (from_gap > 0) {
    const Bytes needed = static_cast<Bytes>(from_gap) * geometry_.page_bytes;
    if (gap_bytes() < needed) compact_states_until_gap(needed);
    if (gap_bytes() < needed) throw std::logic_error("unified arena: no room for the pages after compaction");
    for (std::uint32_t i = 0; i < from_gap; ++i) {
      page_owner_[kv_count_] = owner;
      pages.push_back(kv_count_++);
    }
  }
  live_pages_ += count;
}

void UnifiedArena::compact_kv_until_gap(Bytes gap_needed) {
  while (gap_bytes() < gap_needed && kv_count_ > 0) {
    const std::uint32_t top = kv_count_ - 1;
    if (kv_holes_.contains(top)) {
      kv_holes_.erase(top);
    } else {
      if (kv_holes_.empty()) return;
      const std::uint32_t dest = kv_holes_.lowest();
      kv_holes_.erase(dest);
      const std::uint32_t owner = page_owner_[top];
      auto& pages = owners_[owner].pages;
      *std::find(pages.begin(), pages.end(), top) = dest;  // moves are rare: a search is cheaper than an index table
      page_owner_[dest] = owner;
      page_owner_[top] = kNoOwner;
      bytes_moved_ += geometry_.page_bytes;
      ++moves_;
    }
    --kv_count_;
  }
}

void UnifiedArena::compact_states_until_gap(Bytes gap_needed) {
  while (gap_bytes() < gap_needed && state_count_ > 0) {
    const std::uint32_t bottom = state_count_ - 1;  // the slot nearest the gap
    if (state_holes_.contains(bottom)) {
      state_holes_.erase(bottom);
    } else {
      if (state_holes_.empty()) return;
      const std::uint32_t dest = state_holes_.lowest();
      state_holes_.erase(dest);
      const std::uint32_t owner = state_owner_[bottom];
      state_owner_[dest] = owner;
      owners_[owner].state = dest;
      state_owner_[bottom] = kNoOwner;
      bytes_moved_ += geometry_.state_bytes;
      ++moves_;
    }
    --state_count_;
  }
}

void UnifiedArena::release(std::uint32_t owner) {
  if (owner >= owners_.size()) return;
  Owner& o = owners_[owner];
  for (std::uint32_t pos : o.pages) {
    page_owner_[pos] = kNoOwner;
    kv_holes_.insert(pos);
  }
  live_pages_ -= static_cast<std::uint32_t>(o.pages.size());
  o.pages.clear();
  if (o.state != kNoOwner) {
    state_owner_[o.state] = kNoOwner;
    state_holes_.insert(o.state);
    o.state = kNoOwner;
    --live_states_;
  }
  retreat_edges();
  if (geometry_.compaction == CompactionMode::Eager) compact_everything();
}

void UnifiedArena::retreat_edges() {
  // Holes touching the gap are simply gap.
  while (kv_count_ > 0 && kv_holes_.contains(kv_count_ - 1)) kv_holes_.erase(--kv_count_);
  while (state_count_ > 0 && state_holes_.contains(state_count_ - 1)) state_holes_.erase(--state_count_);
}

void UnifiedArena::compact_everything() {
  compact_kv_until_gap(geometry_.total_bytes + 1);
  compact_states_until_gap(geometry_.total_bytes + 1);
  retreat_edges();
}

void UnifiedArena::check_invariants() const {
  const Bytes kv_region = static_cast<Bytes>(kv_count_) * geometry_.page_bytes;
  const Bytes state_region = static_cast<Bytes>(state_count_) * geometry_.state_bytes;
  if (kv_region + state_region > geometry_.total_bytes) {
    throw std::logic_error("unified arena: the KV region and the state region overlap");
  }
  std::uint32_t live_pages = 0;
  for (std::uint32_t pos = 0; pos < kv_capacity_; ++pos) {
    const std::uint32_t owner = page_owner_[pos];
    const bool hole = kv_holes_.contains(pos);
    if (pos >= kv_count_) {
      if (owner != kNoOwner || hole) throw std::logic_error("unified arena: page " + std::to_string(pos) + " beyond the KV region is in use");
      continue;
    }
    if (owner == kNoOwner) {
      if (!hole) throw std::logic_error("unified arena: page " + std::to_string(pos) + " is neither live nor a hole (leak)");
      continue;
    }
    if (hole) throw std::logic_error("unified arena: page " + std::to_string(pos) + " is both live and a hole");
    if (owner >= owners_.size()) throw std::logic_error("unified arena: page " + std::to_string(pos) + " has an unknown owner");
    ++live_pages;
  }
  std::uint32_t live_states = 0;
  for (std::uint32_t slot = 0; slot < state_capacity_; ++slot) {
    const std::uint32_t owner = state_owner_[slot];
    const bool hole = state_holes_.contains(slot);
    if (slot >= state_count_) {
      if (owner != kNoOwner || hole) throw std::logic_error("unified arena: state slot " + std::to_string(slot) + " beyond the state region is in use");
      continue;
    }
    if (owner == kNoOwner) {
      if (!hole) throw std::logic_error("unified arena: state slot " + std::to_string(slot) + " is neither live nor a hole (leak)");
      continue;
    }
    if (hole) throw std::logic_error("unified arena: state slot " + std::to_string(slot) + " is both live and a hole");
    if (owner >= owners_.size() || owners_[owner].state != slot) {
      throw std::logic_error("unified arena: state slot " + std::to_string(slot) + " is not held by its owner");
    }
    ++live_states;
  }
  std::size_t listed_pages = 0;
  std::vector<std::uint8_t> listed(kv_capacity_, 0);
  for (std::uint32_t owner = 0; owner < owners_.size(); ++owner) {
    for (std::uint32_t pos : owners_[owner].pages) {
      if (pos >= kv_count_ || page_owner_[pos] != owner || listed[pos]) {
        throw std::logic_error("unified arena: owner " + std::to_string(owner) + " lists page " + std::to_string(pos) +
                               " that is not its own, or twice");
      }
      listed[pos] = 1;
    }
    listed_pages += owners_[owner].pages.size();
  }
  if (live_pages != live_pages_ || listed_pages != live_pages_ || live_states != live_states_) {
    throw std::logic_error("unified arena: live counts disagree with the position tables");
  }
  if (kv_holes_.size() != kv_count_ - live_pages_ || state_holes_.size() != state_count_ - live_states_) {
    throw std::logic_error("unified arena: hole counts disagree with the regions");
  }
  if (geometry_.compaction == CompactionMode::Eager && (!kv_holes_.empty() || !state_holes_.empty())) {
    throw std::logic_error("unified arena: eager compaction left holes");
  }
  // Independent check on byte addresses: no two live units overlap, all inside the arena.
  std::vector<std::pair<Bytes, Bytes>> ranges;
  for (std::uint32_t pos = 0; pos < kv_count_; ++pos) {
    if (page_owner_[pos] == kNoOwner) continue;
    const Bytes begin = static_cast<Bytes>(pos) * geometry_.page_bytes;
    ranges.emplace_back(begin, begin + geometry_.page_bytes);
  }
  for (std::uint32_t slot = 0; slot < state_count_; ++slot) {
    if (state_owner_[slot] == kNoOwner) continue;
    const Bytes end = geometry_.total_bytes - static_cast<Bytes>(slot) * geometry_.state_bytes;
    ranges.emplace_back(end - geometry_.state_bytes, end);
  }
  check_disjoint_ranges(std::move(ranges), geometry_.total_bytes, "unified arena");
  const LocationBytes free = free_by_location();
  if (free[0] + free[1] + free[2] != free_bytes() || free_bytes() + used_bytes() != total_bytes()) {
    throw std::logic_error("unified arena: free + used != total");
  }
}

}  // namespace k3lab::sim
