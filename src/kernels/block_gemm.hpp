#pragma once
// Block-level matrix product on fp32 operands in shared (or global) memory: every thread of the
// block calls gemm_thread with its index and computes its own output elements, so phases need no
// synchronisation inside. device_block.cuh adds a tensor-core (WMMA tf32) version of the same spec.
#include <cstdint>
#include <cstring>

#include "kernel_body.hpp"

namespace k3lab::kernels::detail {

// Element (r, c) lives at ptr[r * row_stride + c * col_stride]: transposes are stride swaps.
struct MatRef {
  const float* ptr;
  int row_stride;
  int col_stride;

  K3LAB_KERNEL_BODY float at(int r, int c) const {
    return ptr[static_cast<std::int64_t>(r) * row_stride + static_cast<std::int64_t>(c) * col_stride];
  }
};

// C (m x n, row-major with c_stride) = A (m x k) * B (k x n)  [+ C when accumulate].
// C must not overlap A or B.
struct GemmSpec {
  int m;
  int n;
  int k;
  MatRef a;
  MatRef b;
  float* c;
  int c_stride;
  bool accumulate;
  // Keep fp32 operands even in the tensor-core path (products whose result feeds a cancellation).
  bool fp32_operands = false;
};

// Each thread owns TM x TN outputs: TM consecutive rows (the same for a warp, so A loads broadcast)
// and TN columns strided by n / TN (consecutive across a warp, so B loads hit distinct banks).
// The value a tensor core sees after __float_to_tf32 (10 explicit mantissa bits, round to nearest,
// ties away from zero); the host emulator uses it to reproduce the tf32 path's precision.
K3LAB_KERNEL_BODY float round_to_tf32(float x) {
#if defined(__CUDA_ARCH__)
  std::uint32_t bits = __float_as_uint(x);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
#endif
  if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
#endif
}

template <int TM, int TN>
K3LAB_KERNEL_BODY void gemm_thread_tiled(int tid, int threads, const GemmSpec& s,
                                         bool tf32_operands) {
  const int col_groups = s.n / TN;
  const int tiles = (s.m / TM) * col_groups;
  for (int t = tid; t < tiles; t += threads) {
    const int row0 = (t / col_groups) * TM;
    const int col0 = t % col_groups;
    float acc[TM][TN];
    for (int r = 0; r < TM; ++r)
      for (int c = 0; c < TN; ++c) acc[r][c] = 0.0f;
    for (int kk = 0; kk < s.k; ++kk) {
      float a[TM];
      float b[TN];
      for (int r = 0; r < TM; ++r) a[r] = s.a.at(row0 + r, kk);
      for (int c = 0; c < TN; ++c) b[c] = s.b.at(kk, col0 + c * col_groups);
      if (tf32_operands) {
        for (int r = 0; r < TM; ++r) a[r] = round_to_tf32(a[r]);
        for (int c = 0; c < TN; ++c) b[c] = round_to_tf32(b[c]);
      }
      for (int r = 0; r < TM; ++r)
        for (int c = 0; c < TN; ++c) acc[r][c] += a[r] * b[c];
    }
    for (int r = 0; r < TM; ++r) {
      for (int c = 0; c < TN; ++c) {
        float* out = s.c + static_cast<std::int64_t>(row0 + r) * s.c_stride + col0 + c * col_groups;
        *out = s.accumulate ? *out + acc[r][c] : acc[r][c];
      }
    }
  }
}

// tf32_operands rounds A and B as tensor cores would (host emulation of the tf32 path only).
K3LAB_KERNEL_BODY void gemm_thread(int tid, int threads, const GemmSpec& s,
                                   bool tf32_operands = false) {
  // Largest register tile that still keeps at least half the block busy.
  if (s.m % 8 == 0 && s.n % 8 == 0 && (s.m / 8) * (s.n / 8) >= threads) {
    gemm_thread_tiled<8, 8>(tid, threads, s, tf32_operands);
  } else if (s.m % 4 == 0 && s.n % 4 == 0 && 2 * (s.m / 4) * (s.n / 4) >= threads) {
    gemm_thread_tiled<4, 4>(tid, threads, s, tf32_operands);
  } else {
    gemm_thread_tiled<1, 1>(tid, threads, s, tf32_operands);
  }
}

}  // namespace k3lab::kernels::detail
