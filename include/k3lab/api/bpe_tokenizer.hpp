#pragma once
// tiktoken-format BPE tokenizer: a vocabulary file of "<base64 bytes> <rank>" lines (Kimi ships its
// vocabulary as tiktoken.model in this format), a regex pre-tokenizer, byte-level merges by rank,
// and special tokens matched before pre-tokenization.
#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "k3lab/api/bpe_merge.hpp"
#include "k3lab/api/pretokenizer.hpp"

namespace k3lab::api {

struct SpecialToken {
  std::string text;  // e.g. "<|im_end|>"
  std::uint32_t id;
};

// Parses tiktoken lines. Blank lines are skipped; anything else malformed (bad base64, missing or
// non-numeric rank, duplicate bytes or rank) throws std::invalid_argument naming `source` and the line.
RankMap parse_tiktoken_ranks(std::istream& in, const std::string& source);
RankMap load_tiktoken_ranks(const std::filesystem::path& path);

// Standard base64 (RFC 4648, '=' padding). Throws std::invalid_argument on bad input.
std::string base64_decode(std::string_view text);

class BpeTokenizer {
 public:
  // The vocabulary must hold all 256 single bytes (byte-level BPE), else std::invalid_argument.
  // Special token ids must not collide with vocabulary ranks or each other.
  BpeTokenizer(RankMap ranks, std::vector<SpecialToken> specials = {},
               std::string pattern = std::string(kKimiPretokenizePattern));

  static BpeTokenizer from_file(const std::filesystem::path& vocabulary, std::vector<SpecialToken> specials = {},
                                std::string pattern = std::string(kKimiPretokenizePattern));

  // Special-token text is encoded as ordinary text.
  std::vector<std::uint32_t> encode_ordinary(std::string_view text) const;
  // Special-token text becomes its id (the leftmost occurrence first, the longest at one position).
  std::vector<std::uint32_t> encode(std::string_view text) const;
  std::size_t count(std::string_view text) const { return encode(text).size(); }
  // The bytes of the tokens; std::invalid_argument for an unknown id.
  std::string decode(const std::vector<std::uint32_t>& ids) const;

  std::vector<std::string_view> pre_tokenize(std::string_view text) const { return pre_.split(text); }
  std::size_t vocabulary_size() const { return ranks_.size() + specials_.size(); }

 private:
  void encode_ordinary_into(std::string_view text, std::vector<std::uint32_t>& out) const;

  RankMap ranks_;
  std::vector<SpecialToken> specials_;
  std::unordered_map<std::uint32_t, std::string> decoder_;
  PreTokenizer pre_;
};

}  // namespace k3lab::api
