#include "k3lab/sim/fixed_split_pool.hpp"

#include <cmath>
#include <stdexcept>

namespace k3lab::sim {

FixedSplitPool::Geometry FixedSplitPool::split(Bytes budget_bytes, Bytes state_bytes, Bytes page_bytes,
                                               std::uint32_t page_tokens, double state_to_kv_ratio,
                                               double watermark_fraction) {
  if (budget_bytes <= 0 || state_bytes <= 0 || page_bytes <= 0 || page_tokens == 0) {
    throw std::invalid_argument("fixed split: budget, state size, page size and page tokens must be positive");
  }
  if (!(state_to_kv_ratio > 0)) throw std::invalid_argument("fixed split: state_to_kv_ratio must be > 0");
  Geometry g;
  g.budget_bytes = budget_bytes;
  g.state_bytes = state_bytes;
  g.page_bytes = page_bytes;
  g.page_tokens = page_tokens;
  const long double state_share =
      static_cast<long double>(budget_bytes) * state_to_kv_ratio / (1.0L + state_to_kv_ratio);
  g.state_slots = static_cast<std::uint32_t>(std::floor(state_share / static_cast<long double>(state_bytes)));
  g.kv_pages = static_cast<std::uint32_t>((budget_bytes - g.state_pool_bytes()) / page_bytes);
  g.watermark_pages = static_cast<std::uint32_t>(std::ceil(watermark_fraction * g.kv_pages));
  return g;
}

FixedSplitPool::FixedSplitPool(const Geometry& geometry)
    : geometry_(geometry),
      states_(geometry.state_slots, geometry.state_bytes, 0),
      kv_(geometry.kv_pages, geometry.page_bytes, geometry.state_pool_bytes()) {
  if (geometry.rounding_bytes() < 0) {
    throw std::invalid_argument("fixed split: the two pools (" + std::to_string(total_bytes()) +
                                " B) exceed the budget (" + std::to_string(geometry.budget_bytes) + " B)");
  }
}

void FixedSplitPool::admit(std::uint32_t owner, std::uint32_t pages) {
  if (check_admit(pages) != Shortage::None) {
    throw std::logic_error("FixedSplitPool::admit called for a request that does not fit");
  }
  states_.alloc(owner);
  kv_.alloc(owner, pages);
}

void FixedSplitPool::check_invariants() const {
  states_.check_invariants("fixed-split state pool");
  kv_.check_invariants("fixed-split kv pool");
  std::vector<std::pair<Bytes, Bytes>> ranges;
  states_.append_live_ranges(ranges);
  kv_.append_live_ranges(ranges);
  check_disjoint_ranges(std::move(ranges), total_bytes(), "fixed-split");
  const LocationBytes free = free_by_location();
  if (free[0] + free[1] != free_bytes() || free_bytes() + used_bytes() != total_bytes()) {
    throw std::logic_error("fixed-split: free + used != total");
  }
}

}  // namespace k3lab::sim
