#pragma once
// A pool of equal-size memory units (KDA state slots, KV pages, padded blocks) handed out by id from a
// free stack, as SGLang's MambaPool and paged token allocators do. Each owner (a running request)
// keeps the list of ids it holds, so that leaks and double allocations can be checked.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "k3lab/sim/pool_types.hpp"

namespace k3lab::sim {

class UnitPool {
 public:
  UnitPool() = default;
  // `base_offset`: byte address of unit 0 inside the budget (for the overlap check).
  UnitPool(std::uint32_t capacity, Bytes unit_bytes, Bytes base_offset);

  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t free_units() const { return static_cast<std::uint32_t>(free_stack_.size()); }
  std::uint32_t used_units() const { return capacity_ - free_units(); }
  Bytes unit_bytes() const { return unit_bytes_; }

  // Takes `count` units for `owner`, or none (returns false) when fewer are free.
  bool alloc(std::uint32_t owner, std::uint32_t count = 1) {
    if (free_stack_.size() < count) return false;
    ensure_owner(owner);
    auto& owned = owned_[owner];
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t id = free_stack_.back();
      free_stack_.pop_back();
      owner_of_[id] = owner;
      owned.push_back(id);
    }
    return true;
  }

  // Returns every unit `owner` holds.
  void release_all(std::uint32_t owner) {
    if (owner >= owned_.size()) return;
    for (std::uint32_t id : owned_[owner]) {
      owner_of_[id] = kNoOwner;
      free_stack_.push_back(id);
    }
    owned_[owner].clear();
  }

  std::uint32_t owned_count(std::uint32_t owner) const {
    return owner < owned_.size() ? static_cast<std::uint32_t>(owned_[owner].size()) : 0;
  }

  // Throws std::logic_error naming `name` if a unit is lost, doubly owned or doubly free.
  void check_invariants(const std::string& name) const;
  // Appends [begin, end) byte ranges of every owned unit.
  void append_live_ranges(std::vector<std::pair<Bytes, Bytes>>& ranges) const;

 private:
  void ensure_owner(std::uint32_t owner) {
    if (owner >= owned_.size()) owned_.resize(owner + 1);
  }

  std::uint32_t capacity_ = 0;
  Bytes unit_bytes_ = 0;
  Bytes base_offset_ = 0;
  std::vector<std::uint32_t> free_stack_;
  std::vector<std::uint32_t> owner_of_;
  std::vector<std::vector<std::uint32_t>> owned_;
};

// Throws std::logic_error if two ranges overlap or one leaves [0, total).
void check_disjoint_ranges(std::vector<std::pair<Bytes, Bytes>> ranges, Bytes total, const std::string& name);

}  // namespace k3lab::sim
