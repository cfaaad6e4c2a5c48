#pragma once
// The mock server's prompt cache: automatic prefix caching at block granularity, like Kimi's.
// A prompt is cut into whole blocks of `block_bytes`; block k is identified by a hash chained over
// blocks 0..k, so a block hits only when every byte before it matches too. A repeated identical
// prefix therefore reports its whole blocks as cached, and a change in the first line reports 0.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <unordered_set>

namespace k3lab::api {

class PrefixCache {
 public:
  // block_bytes > 0. Memory stays under about max_blocks block ids: the cache keeps two generations,
  // and when the newer one would pass max_blocks / 2 the older one is dropped (blocks used since the
  // last turnover survive, like an LRU at generation granularity). 2^18 ids is about 10 MB and holds
  // the last 35 to 70 prompts of one million tokens: enough for every reuse k3lab's experiments make (a
  // warm cell directly follows its priming call), small enough that a long run's memory levels off early
  // (2^21 grew a 300-unit run at 1,048,576 tokens by 36 MB: docs/benchmarks.md).
  explicit PrefixCache(std::size_t block_bytes = 1024, std::size_t max_blocks = std::size_t{1} << 18);

  // Bytes of the longest cached whole-block prefix of `prompt`; then stores all of its whole blocks.
  std::size_t lookup_and_insert(std::string_view prompt);
  // The same lookup without storing.
  std::size_t lookup(std::string_view prompt) const;
  void clear();

  std::size_t block_bytes() const { return block_bytes_; }

 private:
  std::size_t block_bytes_;
  std::size_t max_blocks_;
  mutable std::mutex mutex_;
  std::unordered_set<std::uint64_t> recent_;
  std::unordered_set<std::uint64_t> older_;
};

// A 64-bit hash of `bytes` continuing from `seed` (not cryptographic; for cache keys).
std::uint64_t hash64(std::string_view bytes, std::uint64_t seed);

}  // namespace k3lab::api
