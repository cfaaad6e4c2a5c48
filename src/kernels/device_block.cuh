#pragma once
// The device side of a thread block for the kernel bodies: a phase is one pass of every thread
// followed by __syncthreads(); gemm uses tensor cores (WMMA, tf32 inputs, fp32 accumulation) when
// the math mode asks for it, the product does not insist on fp32 operands and the operands allow
// it; otherwise the fp32 CUDA-core product.
#include <mma.h>

#include <cstdint>

#include "block_gemm.hpp"
#include "k3lab/kernels/kda.hpp"

namespace k3lab::kernels::detail {

__device__ __forceinline__ bool wmma_operand_ok(const MatRef& m) {
  const bool row_major = m.col_stride == 1;
  const bool col_major = m.row_stride == 1;
  const int ld = row_major ? m.row_stride : m.col_stride;
  return (row_major || col_major) && ld % 4 == 0 &&
         (reinterpret_cast<std::uintptr_t>(m.ptr) & 31u) == 0;
}

// Whether every 16x16x8 fragment of the product is a legal WMMA load (ld a multiple of 4 floats,
// fragment addresses 32-byte aligned; both follow from these checks and the tile offsets).
__device__ __forceinline__ bool wmma_compatible(const GemmSpec& s) {
  return s.m % 16 == 0 && s.n % 16 == 0 && s.k % 8 == 0 && wmma_operand_ok(s.a) &&
         wmma_operand_ok(s.b) && s.c_stride % 4 == 0 &&
         (reinterpret_cast<std::uintptr_t>(s.c) & 31u) == 0;
}

template <class ALayout, class BLayout>
__device__ void wmma_gemm_tf32(const GemmSpec& s) {
  using namespace nvcuda;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warps = kBlockThreads / 32;
  const int tiles_n = s.n / 16;
  const int tiles = (s.m / 16) * tiles_n;
  const unsigned lda = s.a.col_stride == 1 ? s.a.row_stride : s.a.col_stride;
  const unsigned ldb = s.b.col_stride == 1 ? s.b.row_stride : s.b.col_stride;
  for (int t = warp; t < tiles; t += warps) {
    const int r0 = (t / tiles_n) * 16;
    const int c0 = (t % tiles_n) * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < s.k; k0 += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, ALayout> a;
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, BLayout> b;
      wmma::load_matrix_sync(a, s.a.ptr + static_cast<std::int64_t>(r0) * s.a.row_stride +
                                    static_cast<std::int64_t>(k0) * s.a.col_stride, lda);
      wmma::load_matrix_sync(b, s.b.ptr + static_cast<std::int64_t>(k0) * s.b.row_stride +
                                    static_cast<std::int64_t>(c0) * s.b.col_stride, ldb);
#pragma unroll
      for (int i = 0; i < a.num_elements; ++i) a.x[i] = wmma::__float_to_tf32(a.x[i]);
#pragma unroll
      for (int i = 0; i < b.num_elements; ++i) b.x[i] = wmma::__float_to_tf32(b.x[i]);
      wmma::mma_sync(acc, a, b, acc);
    }
    float* c = s.c + static_cast<std::int64_t>(r0) * s.c_stride + c0;
    if (s.accumulate) {
      wmma::fragment<wmma::accumulator, 16, 16, 8, float> previous;
      wmma::load_matrix_sync(previous, c, s.c_stride, wmma::mem_row_major);
#pragma unroll
      for (int i = 0; i < acc.num_elements; ++i) acc.x[i] += previous.x[i];
    }
    wmma::store_matrix_sync(c, acc, s.c_stride, wmma::mem_row_major);
  }
}

template <KdaMath kMath>
struct DeviceBlock {
  template <class Fn>
  __device__ __forceinline__ void phase(Fn&& fn) {
    fn(static_cast<int>(threadIdx.x));
    __syncthreads();
  }

  __device__ void gemm(const GemmSpec& s) {
    if constexpr (kMath == KdaMath::kTensorCoreTf32) {
      if (!s.fp32_operands && wmma_compatible(s)) {
        using nvcuda::wmma::col_major;
        using nvcuda::wmma::row_major;
        const bool a_row = s.a.col_stride == 1;
        const bool b_row = s.b.col_stride == 1;
        if (a_row && b_row) {
          wmma_gemm_tf32<row_major, row_major>(s);
        } else if (a_row) {
          wmma_gemm_tf32<row_major, col_major>(s);
        } else if (b_row) {
          wmma_gemm_tf32<col_major, row_major>(s);
        } else {
          wmma_gemm_tf32<col_major, col_major>(s);
        }
        __syncthreads();
        return;
      }
    }
    gemm_thread(static_cast<int>(threadIdx.x), kBlockThreads, s);
    __syncthreads();
  }
};

}  // namespace k3lab::kernels::detail
