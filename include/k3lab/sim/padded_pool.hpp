#pragma once
// Reference policy (c): vLLM's hybrid allocator. One pool of equal blocks; the attention block is
// inflated until one layer's block is at least one layer's KDA state, the state page is padded up to
// it, and layers are grouped so that every group has the same page size. A request holds one block
// per KDA group for its state plus ceil(tokens / block_tokens) attention blocks.
#include <cstdint>
#include <string>

#include "k3lab/sim/pool_types.hpp"
#include "k3lab/sim/unit_pool.hpp"

namespace k3lab::sim {

class PaddedPool {
 public:
  struct Geometry {
    Bytes budget_bytes = 0;
    std::uint32_t block_tokens = 0;   // attention tokens per block (inflated)
    Bytes block_bytes = 0;            // one block id: one page in each of group_layers buffers
    std::uint32_t state_blocks = 0;   // blocks per request for its KDA state (one per KDA group)
    std::uint32_t kv_groups = 1;      // blocks per block_tokens of KV (one per attention group)
    std::uint32_t total_blocks = 0;
    std::uint32_t watermark_blocks = 0;
    Bytes pool_bytes() const { return static_cast<Bytes>(total_blocks) * block_bytes; }
  };

  explicit PaddedPool(const Geometry& geometry);

  static constexpr const char* kLocationNames[kMaxLocations] = {"block-pool", "", ""};
  static constexpr int kLocations = 1;

  const Geometry& geometry() const { return geometry_; }
  std::uint32_t page_tokens() const { return geometry_.block_tokens; }

  Shortage check_admit(std::uint32_t pages) const {
    return blocks_.free_units() >= admit_blocks(pages) + geometry_.watermark_blocks ? Shortage::None
                                                                                     : Shortage::Shared;
  }
  bool fits_when_empty(std::uint32_t pages) const {
    return admit_blocks(pages) + geometry_.watermark_blocks <= geometry_.total_blocks;
  }
  void admit(std::uint32_t owner, std::uint32_t pages);
  // One more block_tokens of KV: one block in every attention group, or nothing.
  bool grow(std::uint32_t owner) { return blocks_.alloc(owner, geometry_.kv_groups); }
  void release(std::uint32_t owner) { blocks_.release_all(owner); }

  Bytes total_bytes() const { return geometry_.pool_bytes(); }
  Bytes used_bytes() const { return static_cast<Bytes>(blocks_.used_units()) * geometry_.block_bytes; }
  Bytes free_bytes() const { return total_bytes() - used_bytes(); }
  LocationBytes free_by_location() const { return {free_bytes(), 0, 0}; }
  std::uint32_t blocks_of(std::uint32_t owner) const { return blocks_.owned_count(owner); }
  Bytes bytes_moved() const { return 0; }
  std::uint64_t moves() const { return 0; }

  void check_invariants() const;

 private:
  std::uint64_t admit_blocks(std::uint32_t pages) const {
    return static_cast<std::uint64_t>(pages) * geometry_.kv_groups + geometry_.state_blocks;
  }

  Geometry geometry_;
  UnitPool blocks_;
};

}  // namespace k3lab::sim
