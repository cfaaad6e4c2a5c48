#pragma once
// A set of small integers (free positions in an allocator region) as a two-level bitset: O(1) insert,
// erase and test, and the lowest member found by scanning one summary word per 4,096 positions.
// The allocators use "lowest first" to keep holes away from the region's growing edge.
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace k3lab::sim {

class HoleSet {
 public:
  HoleSet() = default;
  explicit HoleSet(std::uint32_t capacity) { reset(capacity); }

  void reset(std::uint32_t capacity) {
    capacity_ = capacity;
    words_.assign((capacity + 63) / 64, 0);
    summary_.assign((words_.size() + 63) / 64, 0);
    count_ = 0;
  }

  std::uint32_t capacity() const { return capacity_; }
  std::uint32_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

  bool contains(std::uint32_t pos) const { return (words_[pos >> 6] >> (pos & 63)) & 1u; }

  void insert(std::uint32_t pos) {
    std::uint64_t& word = words_[pos >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (pos & 63);
    if (word & bit) throw std::logic_error("HoleSet: position " + std::to_string(pos) + " is already a hole");
    word |= bit;
    summary_[pos >> 12] |= std::uint64_t{1} << ((pos >> 6) & 63);
    ++count_;
  }

  void erase(std::uint32_t pos) {
    std::uint64_t& word = words_[pos >> 6];
    const std::uint64_t bit = std::uint64_t{1} << (pos & 63);
    if (!(word & bit)) throw std::logic_error("HoleSet: position " + std::to_string(pos) + " is not a hole");
    word &= ~bit;
    if (word == 0) summary_[pos >> 12] &= ~(std::uint64_t{1} << ((pos >> 6) & 63));
    --count_;
  }

  // Removes up to `count` members, lowest first, calling take(position) for each; returns how many.
  template <class Take>
  std::uint32_t take_lowest(std::uint32_t count, Take&& take) {
    std::uint32_t taken = 0;
    for (std::size_t s = 0; s < summary_.size() && taken < count; ++s) {
      while (summary_[s] != 0 && taken < count) {
        const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(summary_[s]));
        std::uint64_t word = words_[w];
        while (word != 0 && taken < count) {
          take(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(word))));
          word &= word - 1;
          ++taken;
        }
        words_[w] = word;
        if (word == 0) summary_[s] &= ~(std::uint64_t{1} << (w & 63));
      }
    }
    count_ -= taken;
    return taken;
  }

  // The lowest member; precondition: !empty().
  std::uint32_t lowest() const {
    for (std::size_t s = 0; s < summary_.size(); ++s) {
      if (summary_[s] == 0) continue;
      const std::size_t w = s * 64 + static_cast<std::size_t>(std::countr_zero(summary_[s]));
      return static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(words_[w])));
    }
    throw std::logic_error("HoleSet::lowest on an empty set");
  }

 private:
  std::uint32_t capacity_ = 0;
  std::uint32_t count_ = 0;
  std::vector<std::uint64_t> words_;
  std::vector<std::uint64_t> summary_;
};

}  // namespace k3lab::sim
