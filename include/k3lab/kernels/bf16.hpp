#pragma once
// BFloat16 storage type shared by host code and kernels. Layout-compatible with __nv_bfloat16 and
// at::BFloat16 (two bytes, the top half of an IEEE float), so device pointers cast between them.
#include <cstdint>
#include <cstring>

#include "k3lab/kernels/host_device.hpp"

namespace k3lab::kernels {

struct Bf16 {
  std::uint16_t bits;
};
static_assert(sizeof(Bf16) == 2, "Bf16 must be two bytes");

K3LAB_HD_INLINE float bf16_to_float(Bf16 value) {
  const std::uint32_t wide = static_cast<std::uint32_t>(value.bits) << 16;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(wide);
#else
  float out;
  std::memcpy(&out, &wide, sizeof(out));
  return out;
#endif
}

// Round to nearest even, as __float2bfloat16_rn does; NaN stays a (quiet) NaN.
K3LAB_HD_INLINE Bf16 float_to_bf16(float value) {
#if defined(__CUDA_ARCH__)
  std::uint32_t bits = __float_as_uint(value);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
#endif
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return Bf16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return Bf16{static_cast<std::uint16_t>(bits >> 16)};
}

// The value a float takes after a round trip through bf16 (what a kernel actually reads).
K3LAB_HD_INLINE float round_to_bf16(float value) { return bf16_to_float(float_to_bf16(value)); }

}  // namespace k3lab::kernels
