#pragma once
// SHA-256 (FIPS 180-4), used to fingerprint reasoning_content without keeping it. Written here
// rather than linked from OpenSSL so that k3lab_api needs no crypto library on any machine.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace k3lab::api {

class Sha256 {
 public:
  Sha256();
  void update(std::string_view bytes);
  std::array<std::uint8_t, 32> digest();  // finalizes; call once

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t length_ = 0;
};

// Lower-case hex digest of the bytes.
std::string sha256_hex(std::string_view bytes);

}  // namespace k3lab::api
