#include "k3lab/api/bpe_merge.hpp"

#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

namespace k3lab::api {
namespace {

constexpr std::uint32_t kNoRank = std::numeric_limits<std::uint32_t>::max();

std::uint32_t rank_of(const RankMap& ranks, std::string_view bytes) {
  const auto it = ranks.find(bytes);
  return it == ranks.end() ? kNoRank : it->second;
}

std::uint32_t byte_rank(const RankMap& ranks, std::string_view piece, std::size_t i) {
  const std::uint32_t r = rank_of(ranks, piece.substr(i, 1));
  if (r == kNoRank) {
    throw std::invalid_argument("vocabulary has no token for byte 0x" +
                                std::string(1, "0123456789abcdef"[static_cast<unsigned char>(piece[i]) >> 4]) +
                                std::string(1, "0123456789abcdef"[static_cast<unsigned char>(piece[i]) & 15]) +
                                "; a byte-level BPE vocabulary must contain all 256 single bytes");
  }
  return r;
}

}  // namespace

std::vector<std::uint32_t> byte_pair_encode_reference(std::string_view piece, const RankMap& ranks) {
  if (piece.empty()) return {};
  if (const std::uint32_t whole = rank_of(ranks, piece); whole != kNoRank) return {whole};
  std::vector<std::size_t> starts;  // part k is piece[starts[k], starts[k+1])
  for (std::size_t i = 0; i <= piece.size(); ++i) starts.push_back(i);
  while (starts.size() > 2) {
    std::uint32_t best = kNoRank;
    std::size_t best_k = 0;
    for (std::size_t k = 0; k + 2 < starts.size(); ++k) {
      const std::uint32_t r = rank_of(ranks, piece.substr(starts[k], starts[k + 2] - starts[k]));
      if (r < best) {
        best = r;
        best_k = k;
      }
    }
    if (best == kNoRank) break;
    starts.erase(starts.begin() + static_cast<std::ptrdiff_t>(best_k) + 1);
  }
  std::vector<std::uint32_t> out;
  for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
    const std::size_t len = starts[k + 1] - starts[k];
    out.push_back(len == 1 ? byte_rank(ranks, piece, starts[k]) : rank_of(ranks, piece.substr(starts[k], len)));
  }
  return out;
}

std::vector<std::uint32_t> byte_pair_encode(std::string_view piece, const RankMap& ranks) {
  const std::size_t n = piece.size();
  if (n == 0) return {};
  if (const std::uint32_t whole = rank_of(ranks, piece); whole != kNoRank) return {whole};
  // Parts are identified by their start byte; a part's start never changes when it absorbs its right
  // neighbour, so (rank, left start) orders candidates exactly as the reference's leftmost-lowest scan.
  std::vector<std::size_t> end(n), prev(n);
  std::vector<char> alive(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    end[i] = i + 1;
    prev[i] = i == 0 ? n : i - 1;  // n: none
  }
  using Candidate = std::tuple<std::uint32_t, std::size_t, std::size_t>;  // rank, left start, right end
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto push_pair = [&](std::size_t left) {
    if (left >= n || !alive[left]) return;
    const std::size_t right = end[left];
    if (right >= n) return;
    const std::uint32_t r = rank_of(ranks, piece.substr(left, end[right] - left));
    if (r != kNoRank) heap.emplace(r, left, end[right]);
  };
  for (std::size_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!heap.empty()) {
    const auto [r, left, right_end] = heap.top();
    heap.pop();
    const std::size_t right = end[left];
    if (!alive[left] || right >= n || end[right] != right_end) continue;  // stale
    end[left] = right_end;
    alive[right] = 0;
    if (right_end < n) prev[right_end] = left;
    if (prev[left] != n) push_pair(prev[left]);
    push_pair(left);
  }
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < n; i = end[i]) {
    out.push_back(end[i] - i == 1 ? byte_rank(ranks, piece, i) : rank_of(ranks, piece.substr(i, end[i] - i)));
  }
  return out;
}

}  // namespace k3lab::api
