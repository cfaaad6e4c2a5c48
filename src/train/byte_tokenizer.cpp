#include "k3lab/train/byte_tokenizer.hpp"

#include <stdexcept>

namespace k3lab::train {

std::vector<std::uint32_t> encode_bytes(std::string_view text) {
  std::vector<std::uint32_t> tokens;
  tokens.reserve(text.size());
  for (unsigned char c : text) tokens.push_back(c);
  return tokens;
}

std::string decode_bytes(std::span<const std::uint32_t> tokens) {
  std::string text;
  text.reserve(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] > 255) {
      throw std::invalid_argument("decode_bytes: token " + std::to_string(tokens[i]) + " at position " +
                                  std::to_string(i) + " is not a byte; these tokens come from another tokenizer");
    }
    text.push_back(static_cast<char>(tokens[i]));
  }
  return text;
}

}  // namespace k3lab::train
