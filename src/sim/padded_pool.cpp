#include "k3lab/sim/padded_pool.hpp"

#include <stdexcept>
#include <vector>

namespace k3lab::sim {

PaddedPool::PaddedPool(const Geometry& geometry)
    : geometry_(geometry), blocks_(geometry.total_blocks, geometry.block_bytes, 0) {
  if (geometry.block_tokens == 0 || geometry.block_bytes <= 0 || geometry.state_blocks == 0 ||
      geometry.kv_groups == 0) {
    throw std::invalid_argument("padded pool: block tokens, block bytes, state blocks and kv groups must be positive");
  }
  if (geometry.pool_bytes() > geometry.budget_bytes) {
    throw std::invalid_argument("padded pool: " + std::to_string(geometry.total_blocks) + " blocks exceed the budget");
  }
}

void PaddedPool::admit(std::uint32_t owner, std::uint32_t pages) {
  if (check_admit(pages) != Shortage::None) {
    throw std::logic_error("PaddedPool::admit called for a request that does not fit");
  }
  blocks_.alloc(owner, static_cast<std::uint32_t>(admit_blocks(pages)));
}

void PaddedPool::check_invariants() const {
  blocks_.check_invariants("padded pool");
  std::vector<std::pair<Bytes, Bytes>> ranges;
  blocks_.append_live_ranges(ranges);
  check_disjoint_ranges(std::move(ranges), total_bytes(), "padded pool");
  if (free_bytes() + used_bytes() != total_bytes()) throw std::logic_error("padded pool: free + used != total");
}

}  // namespace k3lab::sim
