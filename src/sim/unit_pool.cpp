#include "k3lab/sim/unit_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace k3lab::sim {

UnitPool::UnitPool(std::uint32_t capacity, Bytes unit_bytes, Bytes base_offset)
    : capacity_(capacity), unit_bytes_(unit_bytes), base_offset_(base_offset) {
  if (unit_bytes <= 0) throw std::invalid_argument("UnitPool: unit size must be positive");
  free_stack_.reserve(capacity);
  // Lowest ids come off the stack first: deterministic, easy to follow in hand-computed tests.
  for (std::uint32_t id = capacity; id > 0; --id) free_stack_.push_back(id - 1);
  owner_of_.assign(capacity, kNoOwner);
}

void UnitPool::check_invariants(const std::string& name) const {
  std::vector<std::uint8_t> seen_free(capacity_, 0);
  for (std::uint32_t id : free_stack_) {
    if (id >= capacity_) throw std::logic_error(name + ": free id " + std::to_string(id) + " out of range");
    if (seen_free[id]) throw std::logic_error(name + ": id " + std::to_string(id) + " is free twice");
    if (owner_of_[id] != kNoOwner) {
      throw std::logic_error(name + ": id " + std::to_string(id) + " is both free and owned");
    }
    seen_free[id] = 1;
  }
  std::size_t owned_total = 0;
  std::vector<std::uint8_t> seen_owned(capacity_, 0);
  for (std::uint32_t owner = 0; owner < owned_.size(); ++owner) {
    for (std::uint32_t id : owned_[owner]) {
      if (id >= capacity_ || owner_of_[id] != owner) {
        throw std::logic_error(name + ": owner " + std::to_string(owner) + " lists id " + std::to_string(id) +
                               " that is not recorded as its own");
      }
      if (seen_owned[id]) throw std::logic_error(name + ": id " + std::to_string(id) + " is listed twice (overlap)");
      seen_owned[id] = 1;
    }
    owned_total += owned_[owner].size();
  }
  if (owned_total + free_stack_.size() != capacity_) {
    throw std::logic_error(name + ": " + std::to_string(owned_total) + " owned + " +
                           std::to_string(free_stack_.size()) + " free != capacity " + std::to_string(capacity_) +
                           " (a unit leaked)");
  }
}

void UnitPool::append_live_ranges(std::vector<std::pair<Bytes, Bytes>>& ranges) const {
  for (std::uint32_t id = 0; id < capacity_; ++id) {
    if (owner_of_[id] == kNoOwner) continue;
    const Bytes begin = base_offset_ + static_cast<Bytes>(id) * unit_bytes_;
    ranges.emplace_back(begin, begin + unit_bytes_);
  }
}

void check_disjoint_ranges(std::vector<std::pair<Bytes, Bytes>> ranges, Bytes total, const std::string& name) {
  std::sort(ranges.begin(), ranges.end());
  Bytes end_of_previous = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin < 0 || end > total || begin >= end) {
      throw std::logic_error(name + ": live range [" + std::to_string(begin) + ", " + std::to_string(end) +
                             ") lies outside the budget [0, " + std::to_string(total) + ")");
    }
    if (begin < end_of_previous) {
      throw std::logic_error(name + ": live range starting at " + std::to_string(begin) +
                             " overlaps the previous one ending at " + std::to_string(end_of_previous));
    }
    end_of_previous = end;
  }
}

}  // namespace k3lab::sim
