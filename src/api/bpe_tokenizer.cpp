#include "k3lab/api/bpe_tokenizer.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace k3lab::api {
namespace {

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_decode(std::string_view text) {
  if (text.size() % 4 != 0) throw std::invalid_argument("base64 length " + std::to_string(text.size()) + " is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) throw std::invalid_argument("base64 has data after '=' padding");
      v[k] = base64_value(c);
      if (v[k] < 0) throw std::invalid_argument(std::string("base64 has an invalid character '") + c + "'");
    }
    const std::uint32_t triple = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                                 (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<char>(triple >> 16));
    if (pad < 2) out.push_back(static_cast<char>((triple >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(triple & 0xFF));
  }
  return out;
}

RankMap parse_tiktoken_ranks(std::istream& in, const std::string& source) {
  RankMap ranks;
  std::unordered_set<std::uint32_t> seen_ranks;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    auto fail = [&](const std::string& why) {
      return std::invalid_argument(source + ":" + std::to_string(line_no) + ": " + why +
                                   " (expected '<base64 bytes> <rank>', as in tiktoken.model)");
    };
    const auto space = line.find(' ');
    if (space == std::string::npos || space == 0) throw fail("no space between token and rank");
    const std::string rank_text = line.substr(space + 1);
    if (rank_text.empty() || rank_text.find_first_not_of("0123456789") != std::string::npos || rank_text.size() > 10) {
      throw fail("rank '" + rank_text + "' is not a non-negative integer");
    }
    const unsigned long long rank = std::stoull(rank_text);
    if (rank >= 0xFFFFFFFFull) throw fail("rank " + rank_text + " does not fit in 32 bits");
    std::string bytes;
    try {
      bytes = base64_decode(std::string_view(line).substr(0, space));
    } catch (const std::invalid_argument& e) {
      throw fail(e.what());
    }
    if (bytes.empty()) throw fail("token decodes to no bytes");
    if (!seen_ranks.insert(static_cast<std::uint32_t>(rank)).second) throw fail("rank " + rank_text + " appears twice");
    if (!ranks.emplace(std::move(bytes), static_cast<std::uint32_t>(rank)).second) throw fail("token bytes appear twice");
  }
  if (ranks.empty()) throw std::invalid_argument(source + ": no vocabulary lines found");
  return ranks;
}

RankMap load_tiktoken_ranks(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open vocabulary file " + path.string() + "; pass a tiktoken.model path");
  return parse_tiktoken_ranks(in, path.string());
}

BpeTokenizer::BpeTokenizer(RankMap ranks, std::vector<SpecialToken> specials, std::string pattern)
    : ranks_(std::move(ranks)), specials_(std::move(specials)), pre_(std::move(pattern)) {
  for (int b = 0; b < 256; ++b) {
    if (!ranks_.count(std::string(1, static_cast<char>(b)))) {
      throw std::invalid_argument("vocabulary lacks the single byte " + std::to_string(b) +
                                  "; a byte-level BPE vocabulary must contain all 256 bytes");
    }
  }
  decoder_.reserve(ranks_.size() + specials_.size());
  for (const auto& [bytes, rank] : ranks_) decoder_.emplace(rank, bytes);
  for (const auto& s : specials_) {
    if (s.text.empty()) throw std::invalid_argument("special token with id " + std::to_string(s.id) + " has empty text");
    if (!decoder_.emplace(s.id, s.text).second) {
      throw std::invalid_argument("special token '" + s.text + "' id " + std::to_string(s.id) +
                                  " collides with another token id");
    }
  }
}

BpeTokenizer BpeTokenizer::from_file(const std::filesystem::path& vocabulary, std::vector<SpecialToken> specials,
                                     std::string pattern) {
  return BpeTokenizer(load_tiktoken_ranks(vocabulary), std::move(specials), std::move(pattern));
}

void BpeTokenizer::encode_ordinary_into(std::string_view text, std::vector<std::uint32_t>& out) const {
  for (const auto piece : pre_.split(text)) {
    const auto ids = byte_pair_encode(piece, ranks_);
    out.insert(out.end(), ids.begin(), ids.end());
  }
}

std::vector<std::uint32_t> BpeTokenizer::encode_ordinary(std::string_view text) const {
  std::vector<std::uint32_t> out;
  encode_ordinary_into(text, out);
  return out;
}

std::vector<std::uint32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<std::uint32_t> out;
  // Next occurrence of each special at or after `pos`, refreshed only once `pos` passes it, so each
  // special scans the text about once.
  std::vector<std::size_t> next_at(specials_.size());
  for (std::size_t k = 0; k < specials_.size(); ++k) next_at[k] = text.find(specials_[k].text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t best_at = std::string_view::npos;
    const SpecialToken* best = nullptr;
    for (std::size_t k = 0; k < specials_.size(); ++k) {
      if (next_at[k] != std::string_view::npos && next_at[k] < pos) next_at[k] = text.find(specials_[k].text, pos);
      const std::size_t at = next_at[k];
      if (at == std::string_view::npos) continue;
      if (at < best_at || (at == best_at && specials_[k].text.size() > best->text.size())) {
        best_at = at;
        best = &specials_[k];
      }
    }
    if (!best) {
      encode_ordinary_into(text.substr(pos), out);
      break;
    }
    encode_ordinary_into(text.substr(pos, best_at - pos), out);
    out.push_back(best->id);
    pos = best_at + best->text.size();
  }
  return out;
}

std::string BpeTokenizer::decode(const std::vector<std::uint32_t>& ids) const {
  std::string out;
  for (const std::uint32_t id : ids) {
    const auto it = decoder_.find(id);
    if (it == decoder_.end()) throw std::invalid_argument("token id " + std::to_string(id) + " is not in the vocabulary");
    out += it->second;
  }
  return out;
}

}  // namespace k3lab::api
