#pragma once
// SHA-256 (FIPS 180-4): protocol hashes, fixture hashes, reasoning hashes. Small enough to own.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace k3lab::core {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  std::array<std::uint8_t, 32> digest();
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view text);

}  // namespace k3lab::core
