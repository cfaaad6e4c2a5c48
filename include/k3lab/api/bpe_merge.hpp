#pragma once
// Byte-level BPE merging of one pre-token, tiktoken style: the vocabulary maps byte strings to
// ranks; starting from single bytes, the adjacent pair whose concatenation has the lowest rank is
// merged (the leftmost on a tie), until no adjacent pair is in the vocabulary.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace k3lab::api {

struct BytesHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
// Byte string -> rank (= token id).
using RankMap = std::unordered_map<std::string, std::uint32_t, BytesHash, std::equal_to<>>;

// O(n log n) with a heap of candidate pairs; equal to byte_pair_encode_reference on every input.
// A piece that is itself in the vocabulary encodes to that one token (tiktoken's shortcut).
// Throws std::invalid_argument when a byte of the piece has no rank.
std::vector<std::uint32_t> byte_pair_encode(std::string_view piece, const RankMap& ranks);

// The direct O(n^2) statement of the rule, kept as the test reference.
std::vector<std::uint32_t> byte_pair_encode_reference(std::string_view piece, const RankMap& ranks);

}  // namespace k3lab::api
