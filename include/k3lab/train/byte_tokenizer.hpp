#pragma once
// Byte-level tokenisation, the default for the built-in corpora: token = byte value (0..255), so it
// needs no vocabulary file and round-trips any UTF-8 text exactly.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace k3lab::train {

inline constexpr std::int64_t kByteVocabSize = 256;

std::vector<std::uint32_t> encode_bytes(std::string_view text);
// Throws std::invalid_argument on a token above 255.
std::string decode_bytes(std::span<const std::uint32_t> tokens);

}  // namespace k3lab::train
