#include "k3lab/api/prefix_cache.hpp"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace k3lab::api {
namespace {

constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ull;

// splitmix64's finaliser (no increment): spreads every input bit over the whole word.
std::uint64_t finalize64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t hash64(std::string_view bytes, std::uint64_t seed) {
  std::uint64_t h = finalize64(seed ^ (bytes.size() * kMul));
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ finalize64(w)) * kMul;
    h ^= h >> 29;
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, p, n);
  h = (h ^ finalize64(tail ^ (static_cast<std::uint64_t>(n) << 56))) * kMul;
  return finalize64(h);
}

PrefixCache::PrefixCache(std::size_t block_bytes, std::size_t max_blocks)
    : block_bytes_(block_bytes), max_blocks_(max_blocks) {
  if (block_bytes_ == 0) throw std::invalid_argument("prefix cache block size must be positive");
  if (max_blocks_ < 2) throw std::invalid_argument("prefix cache must hold at least 2 blocks");
}

std::size_t PrefixCache::lookup(std::string_view prompt) const {
  std::lock_guard lock(mutex_);
  std::uint64_t h = 0;
  std::size_t cached = 0;
  for (std::size_t off = 0; off + block_bytes_ <= prompt.size(); off += block_bytes_) {
    h = hash64(prompt.substr(off, block_bytes_), h);
    if (!recent_.count(h) && !older_.count(h)) break;
    cached = off + block_bytes_;
  }
  return cached;
}

std::size_t PrefixCache::lookup_and_insert(std::string_view prompt) {
  std::vector<std::uint64_t> ids;
  ids.reserve(prompt.size() / block_bytes_);
  std::uint64_t h = 0;
  for (std::size_t off = 0; off + block_bytes_ <= prompt.size(); off += block_bytes_) {
    h = hash64(prompt.substr(off, block_bytes_), h);
    ids.push_back(h);
  }
  std::lock_guard lock(mutex_);
  std::size_t hit_blocks = 0;
  while (hit_blocks < ids.size() && (recent_.count(ids[hit_blocks]) || older_.count(ids[hit_blocks]))) ++hit_blocks;
  // Turnover after the lookup, so this prompt's own hits count before the older generation goes.
  if (recent_.size() + ids.size() > max_blocks_ / 2) {
    older_ = std::move(recent_);
    recent_.clear();
  }
  recent_.insert(ids.begin(), ids.end());  // hits are refreshed into the newer generation
  return hit_blocks * block_bytes_;
}

void PrefixCache::clear() {
  std::lock_guard lock(mutex_);
  recent_.clear();
  older_.clear();
}

}  // namespace k3lab::api
