// KDA forward and backward launchers. The kernel bodies live in kda_forward_body.hpp and
// kda_backward_body.hpp (shared with the host emulator); here they get a grid of one block per
// (sequence, head) and a DeviceBlock that maps phases to __syncthreads().
#include "cuda_check.hpp"
#include "device_block.cuh"
#include "k3lab/kernels/kda.hpp"
#include "kda_backward_body.hpp"
#include "kda_forward_body.hpp"
#include "kda_launch_params.hpp"

namespace k3lab::kernels {
namespace detail {
namespace {

template <KdaMath kMath>
__global__ void __launch_bounds__(kBlockThreads) kda_forward_kernel(const KdaParams p) {
  extern __shared__ __align__(128) float smem[];
  DeviceBlock<kMath> block;
  kda_forward_sequence(block, p, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), smem);
}

template <KdaMath kMath>
__global__ void __launch_bounds__(kBlockThreads) kda_backward_kernel(const KdaParams p) {
  extern __shared__ __align__(128) float smem[];
  DeviceBlock<kMath> block;
  kda_backward_sequence(block, p, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), smem);
}

// d dt_bias and d A_log: sums over sequences of the per-(sequence, head) partials, in order.
__global__ void kda_gate_grad_reduce_kernel(const float* partials, int num_seqs, int heads,
                                            int key_dim, float* da_log, float* ddt_bias) {
  const int index = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (index >= heads * (key_dim + 1)) return;
  const int h = index / (key_dim + 1), c = index % (key_dim + 1);
  float sum = 0.0f;
  for (int n = 0; n < num_seqs; ++n) {
    sum += partials[(static_cast<std::int64_t>(n) * heads + h) * (key_dim + 1) + c];
  }
  if (c < key_dim) {
    ddt_bias[h * key_dim + c] = sum;
  } else {
    da_log[h] = sum;
  }
}

template <KdaMath kMath>
void launch_forward(const KdaShape& shape, const KdaParams& p, cudaStream_t stream) {
  const std::size_t smem = kda_forward_smem_bytes(shape);
  prepare_smem(kda_forward_kernel<kMath>, smem, "kda_forward");
  const dim3 grid(static_cast<unsigned>(shape.num_seqs), static_cast<unsigned>(shape.heads));
  kda_forward_kernel<kMath><<<grid, kBlockThreads, smem, stream>>>(p);
  cuda_check(cudaGetLastError(), "kda_forward launch");
}

template <KdaMath kMath>
void launch_backward(const KdaShape& shape, const KdaParams& p, cudaStream_t stream) {
  const std::size_t smem = kda_backward_smem_bytes(shape);
  prepare_smem(kda_backward_kernel<kMath>, smem, "kda_backward");
  const dim3 grid(static_cast<unsigned>(shape.num_seqs), static_cast<unsigned>(shape.heads));
  kda_backward_kernel<kMath><<<grid, kBlockThreads, smem, stream>>>(p);
  cuda_check(cudaGetLastError(), "kda_backward launch");
}

}  // namespace
}  // namespace detail

void kda_forward(const KdaShape& shape, const KdaOptions& options, const KdaForwardArgs& args,
                 Stream stream) {
  detail::check_forward_args(shape, options, args);
  const detail::KdaParams p = detail::make_forward_params(shape, options, args);
  if (options.math == KdaMath::kTensorCoreTf32) {
    detail::launch_forward<KdaMath::kTensorCoreTf32>(shape, p, stream);
  } else {
    detail::launch_forward<KdaMath::kFp32Scalar>(shape, p, stream);
  }
}

void kda_backward(const KdaShape& shape, const KdaOptions& options, const KdaBackwardArgs& args,
                  Stream stream) {
  detail::check_backward_args(shape, options, args);
  const detail::KdaParams p = detail::make_backward_params(shape, options, args);
  // Pass 1: recompute the forward, saving the state at the start of every tile.
  detail::KdaParams states_pass = detail::make_forward_params(shape, options, args.forward);
  states_pass.out = nullptr;
  states_pass.final_state = nullptr;
  states_pass.tile_states = p.tile_states;
  if (options.math == KdaMath::kTensorCoreTf32) {
    detail::launch_forward<KdaMath::kTensorCoreTf32>(shape, states_pass, stream);
    detail::launch_backward<KdaMath::kTensorCoreTf32>(shape, p, stream);
  } else {
    detail::launch_forward<KdaMath::kFp32Scalar>(shape, states_pass, stream);
    detail::launch_backward<KdaMath::kFp32Scalar>(shape, p, stream);
  }
  if (args.forward.g_log_decay != nullptr) return;  // no A_log / dt_bias to reduce into
  const int outputs = static_cast<int>(shape.heads * (shape.key_dim + 1));
  detail::kda_gate_grad_reduce_kernel<<<(outputs + 255) / 256, 256, 0, stream>>>(
      p.gate_partials, p.num_seqs, p.heads, p.key_dim, args.da_log, args.ddt_bias);
  detail::cuda_check(cudaGetLastError(), "kda_backward gate-gradient reduction");
}

}  // namespace k3lab::kernels
