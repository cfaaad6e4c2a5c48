// SiTU-GLU forward and backward: one pass over memory each, fp32 math, 16-byte vector accesses
// when the rows allow it. The unfused baseline chains one-operation kernels through fp32 scratch.
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "k3lab/kernels/situ_glu.hpp"
#include "situ_glu_math.hpp"

namespace k3lab::kernels {
namespace detail {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float load_as_float(const float* p) { return *p; }
__device__ __forceinline__ float load_as_float(const Bf16* p) { return bf16_to_float(*p); }
__device__ __forceinline__ void store_from_float(float* p, float x) { *p = x; }
__device__ __forceinline__ void store_from_float(Bf16* p, float x) { *p = float_to_bf16(x); }

// Elements per 16-byte access.
template <class T>
constexpr int kVec = 16 / static_cast<int>(sizeof(T));

template <class T>
struct alignas(16) Pack {
  T x[kVec<T>];
};

template <class T, int kWidth>
__global__ void __launch_bounds__(kThreads)
    situ_forward_kernel(SituGluShape shape, SituGluBetas betas, const T* __restrict__ gate,
                        const T* __restrict__ up, T* __restrict__ out) {
  const std::int64_t groups_per_row = shape.cols / kWidth;
  const std::int64_t groups = shape.rows * groups_per_row;
  for (std::int64_t gi = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       gi < groups; gi += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = gi / groups_per_row;
    const std::int64_t c = (gi % groups_per_row) * kWidth;
    if constexpr (kWidth == 1) {
      const float y = situ_glu_value(load_as_float(gate + r * shape.gate_stride + c),
                                     load_as_float(up + r * shape.up_stride + c), betas.gate, betas.up);
      store_from_float(out + r * shape.out_stride + c, y);
    } else {
      const Pack<T> gp = *reinterpret_cast<const Pack<T>*>(gate + r * shape.gate_stride + c);
      const Pack<T> upk = *reinterpret_cast<const Pack<T>*>(up + r * shape.up_stride + c);
      Pack<T> op;
#pragma unroll
      for (int i = 0; i < kWidth; ++i) {
        store_from_float(&op.x[i], situ_glu_value(load_as_float(&gp.x[i]), load_as_float(&upk.x[i]),
                                                  betas.gate, betas.up));
      }
      *reinterpret_cast<Pack<T>*>(out + r * shape.out_stride + c) = op;
    }
  }
}

template <class T, int kWidth>
__global__ void __launch_bounds__(kThreads)
    situ_backward_kernel(SituGluShape shape, SituGluBetas betas, const T* __restrict__ gate,
                         const T* __restrict__ up, const T* __restrict__ d_out,
                         T* __restrict__ d_gate, T* __restrict__ d_up) {
  const std::int64_t groups_per_row = shape.cols / kWidth;
  const std::int64_t groups = shape.rows * groups_per_row;
  for (std::int64_t gi = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
       gi < groups; gi += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = gi / groups_per_row;
    const std::int64_t c = (gi % groups_per_row) * kWidth;
    const std::int64_t g_at = r * shape.gate_stride + c;
    const std::int64_t u_at = r * shape.up_stride + c;
    const std::int64_t o_at = r * shape.out_stride + c;
    if constexpr (kWidth == 1) {
      const SituValue s = situ_glu_with_grads(load_as_float(gate + g_at), load_as_float(up + u_at),
                                              betas.gate, betas.up);
      const float dy = load_as_float(d_out + o_at);
      store_from_float(d_gate + g_at, dy * s.d_gate);
      store_from_float(d_up + u_at, dy * s.d_up);
    } else {
      const Pack<T> gp = *reinterpret_cast<const Pack<T>*>(gate + g_at);
      const Pack<T> upk = *reinterpret_cast<const Pack<T>*>(up + u_at);
      const Pack<T> dp = *reinterpret_cast<const Pack<T>*>(d_out + o_at);
      Pack<T> dg, du;
#pragma unroll
      for (int i = 0; i < kWidth; ++i) {
        const SituValue s = situ_glu_with_grads(load_as_float(&gp.x[i]), load_as_float(&upk.x[i]),
                                                betas.gate, betas.up);
        const float dy = load_as_float(&dp.x[i]);
        store_from_float(&dg.x[i], dy * s.d_gate);
        store_from_float(&du.x[i], dy * s.d_up);
      }
      *reinterpret_cast<Pack<T>*>(d_gate + g_at) = dg;
      *reinterpret_cast<Pack<T>*>(d_up + u_at) = du;
    }
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

template <class T>
bool can_vectorise(const SituGluShape& s, std::initializer_list<const void*> pointers) {
  constexpr int w = kVec<T>;
  if (s.cols % w != 0 || s.gate_stride % w != 0 || s.up_stride % w != 0 || s.out_stride % w != 0) {
    return false;
  }
  for (const void* p : pointers) {
    if (!aligned16(p)) return false;
  }
  return true;
}

unsigned grid_for(std::int64_t groups) {
  const std::int64_t blocks = (groups + kThreads - 1) / kThreads;
  // A grid-stride loop covers the rest; 64K blocks keep every SM busy on any current GPU.
  return static_cast<unsigned>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

void require(const void* p, const char* name) {
  if (p == nullptr) {
    throw std::invalid_argument(std::string("SiTU-GLU: ") + name + " is null; pass a device pointer");
  }
}

template <class T>
void forward(const SituGluShape& shape, const SituGluBetas& betas, const T* gate, const T* up,
             T* out, cudaStream_t stream) {
  situ_glu_validate(shape, betas);
  if (shape.rows == 0 || shape.cols == 0) return;
  require(gate, "gate");
  require(up, "up");
  require(out, "out");
  if (can_vectorise<T>(shape, {gate, up, out})) {
    constexpr int w = kVec<T>;
    situ_forward_kernel<T, w><<<grid_for(shape.rows * (shape.cols / w)), kThreads, 0, stream>>>(
        shape, betas, gate, up, out);
  } else {
    situ_forward_kernel<T, 1><<<grid_for(shape.rows * shape.cols), kThreads, 0, stream>>>(
        shape, betas, gate, up, out);
  }
  cuda_check(cudaGetLastError(), "situ_glu_forward launch");
}

template <class T>
void backward(const SituGluShape& shape, const SituGluBetas& betas, const T* gate, const T* up,
              const T* d_out, T* d_gate, T* d_up, cudaStream_t stream) {
  situ_glu_validate(shape, betas);
  if (shape.rows == 0 || shape.cols == 0) return;
  require(gate, "gate");
  require(up, "up");
  require(d_out, "d_out");
  require(d_gate, "d_gate");
  require(d_up, "d_up");
  if (can_vectorise<T>(shape, {gate, up, d_out, d_gate, d_up})) {
    constexpr int w = kVec<T>;
    situ_backward_kernel<T, w><<<grid_for(shape.rows * (shape.cols / w)), kThreads, 0, stream>>>(
        shape, betas, gate, up, d_out, d_gate, d_up);
  } else {
    situ_backward_kernel<T, 1><<<grid_for(shape.rows * shape.cols), kThreads, 0, stream>>>(
        shape, betas, gate, up, d_out, d_gate, d_up);
  }
  cuda_check(cudaGetLastError(), "situ_glu_backward launch");
}

// The unfused chain: each kernel does one operation over contiguous fp32 scratch.
enum class UnaryOp { kScaledTanhGate, kSigmoidGate, kScaledTanhUp };

__global__ void unary_kernel(SituGluShape shape, const Bf16* in, std::int64_t stride, UnaryOp op,
                             float beta, float* out) {
  const std::int64_t count = shape.rows * shape.cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float x = bf16_to_float(in[(i / shape.cols) * stride + i % shape.cols]);
    out[i] = op == UnaryOp::kSigmoidGate ? 1.0f / (1.0f + expf(-x)) : beta * tanhf(x / beta);
  }
}

__global__ void multiply_kernel(std::int64_t count, const float* a, const float* b, float* out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[i] = a[i] * b[i];
  }
}

__global__ void multiply_store_kernel(SituGluShape shape, const float* a, const float* b, Bf16* out) {
  const std::int64_t count = shape.rows * shape.cols;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    out[(i / shape.cols) * shape.out_stride + i % shape.cols] = float_to_bf16(a[i] * b[i]);
  }
}

}  // namespace
}  // namespace detail

void situ_glu_forward(const SituGluShape& shape, const SituGluBetas& betas, const Bf16* gate,
                      const Bf16* up, Bf16* out, Stream stream) {
  detail::forward(shape, betas, gate, up, out, stream);
}

void situ_glu_forward(const SituGluShape& shape, const SituGluBetas& betas, const float* gate,
                      const float* up, float* out, Stream stream) {
  detail::forward(shape, betas, gate, up, out, stream);
}

void situ_glu_backward(const SituGluShape& shape, const SituGluBetas& betas, const Bf16* gate,
                       const Bf16* up, const Bf16* d_out, Bf16* d_gate, Bf16* d_up, Stream stream) {
  detail::backward(shape, betas, gate, up, d_out, d_gate, d_up, stream);
}

void situ_glu_backward(const SituGluShape& shape, const SituGluBetas& betas, const float* gate,
                       const float* up, const float* d_out, float* d_gate, float* d_up,
                       Stream stream) {
  detail::backward(shape, betas, gate, up, d_out, d_gate, d_up, stream);
}

void situ_glu_forward_unfused(const SituGluShape& shape, const SituGluBetas& betas,
                              const Bf16* gate, const Bf16* up, Bf16* out, float* scratch,
                              Stream stream) {
  situ_glu_validate(shape, betas);
  const std::int64_t count = shape.rows * shape.cols;
  if (count == 0) return;
  detail::require(scratch, "scratch");
  const unsigned grid = detail::grid_for(count);
  float* tanh_gate = scratch;
  float* sig_gate = scratch + count;
  float* tanh_up = scratch + 2 * count;
  using detail::UnaryOp;
  detail::unary_kernel<<<grid, detail::kThreads, 0, stream>>>(shape, gate, shape.gate_stride,
                                                             UnaryOp::kScaledTanhGate, betas.gate, tanh_gate);
  detail::unary_kernel<<<grid, detail::kThreads, 0, stream>>>(shape, gate, shape.gate_stride,
                                                             UnaryOp::kSigmoidGate, 0.0f, sig_gate);
  detail::multiply_kernel<<<grid, detail::kThreads, 0, stream>>>(count, tanh_gate, sig_gate, tanh_gate);
  detail::unary_kernel<<<grid, detail::kThreads, 0, stream>>>(shape, up, shape.up_stride,
                                                             UnaryOp::kScaledTanhUp, betas.up, tanh_up);
  detail::multiply_store_kernel<<<grid, detail::kThreads, 0, stream>>>(shape, tanh_gate, tanh_up, out);
  detail::cuda_check(cudaGetLastError(), "situ_glu_forward_unfused launch");
}

}  // namespace k3lab::kernels
