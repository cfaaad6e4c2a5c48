#pragma once
// Kimi Delta Attention (KDA), chunkwise, with the lower-bounded ("safe") gate, as CUDA kernels that
// take raw device pointers, sizes and a stream. docs/kernels.md describes the algorithm.
//
// Map of every KDA file. KDA exists three times, each once: the LibTorch implementation (models),
// the double-precision reference (torch-free loops) and the kernel bodies (compiled for the GPU and
// for the host emulator). src/kernels includes nothing of the models; the models' side holds the
// adapter and the registration that plug these kernels into the model seams.
//
// LibTorch, include/k3lab/models/ and src/models/:
//   kda.hpp, kda_recurrent.cpp     the recurrence (gold of the LibTorch tests), decode step, L2 norm
//   kda.hpp, kda_chunkwise.cpp     the chunkwise (WY / UT) form: training and every fallback
//   batched_matmul.{hpp,cpp}       its per-chunk product stacks split across CPU threads
//   kda_gate.hpp, kda_gate.cpp     the bounded and softplus gates (raw logits -> log decay)
//   kda_checks.hpp                 argument checks shared by the forms and the adapter
//   kda_ops.hpp, kda_ops.cpp       the device seam and KdaChunkwiseArgs, the one tensor-argument
//                                  struct (model form plus the kernel form's fields)
//   kda_kernel.hpp, kda_kernel.cpp the kernel adapter: validation shared with kda_validate_options,
//                                  these kernels for CUDA tensors they accept, else the kernel
//                                  form's preprocessing in LibTorch followed by kda_chunkwise
//   kda_kernel_function.{hpp,cpp}  the torch::autograd::Function launching kda_forward/backward
//   kernel_registration.{hpp,cpp}  registers the adapters into the seams (k3lab at start-up)
//   kda_layer.*, kda_bench.*       users: the model layer and `k3lab bench kda`
// Double reference: kda_reference.hpp, src/kernels/kda_reference.cpp (recurrence and its adjoint).
// Kernels, torch-free, this file and src/kernels/:
//   kda.hpp                        the raw-pointer API: shapes, options, launches, emulation
//   kda_host.cpp                   validation, workspace and shared-memory sizes, argument checks
//   kda_launch_params.hpp          public structs -> KdaParams (launchers and emulator)
//   kda_params.hpp                 KdaParams, sequence spans, shared-memory layouts
//   kda_tile.hpp                   per-tile preparation shared by both bodies
//   kda_forward_body.hpp           forward body for one (sequence, head)
//   kda_backward_body.hpp          backward body for one (sequence, head)
//   kernel_body.hpp, block_gemm.hpp   one body for device and host; the block matrix product
//   device_block.cuh, kda.cu       the GPU block (WMMA tf32) and the CUDA launchers (cuda_check.hpp)
//   host_block.hpp, kda_emulation.cpp   the emulated block and the host launchers
//   kernels_without_cuda.cpp       launchers of builds without nvcc (they say how to get CUDA)
//   bench/kernels_bench.cu         the CUDA-event benchmark
// Tests, tests/kernels/ and tests/models/:
//   test_kda_reference.cpp         reference vs a hand trace and finite differences
//   test_kda_emulation.cpp         kernel bodies on the host vs the reference (both math modes)
//   test_kda_gpu.cpp               kernels on the GPU vs the reference
//   test_kda_adapter.cpp           adapter on the CPU (kda_chunkwise) vs the reference; validation
//   test_torch_ops_gpu.cpp         adapter on CUDA vs on the CPU; the seams
//   kda_test_harness.hpp, kernel_test_support.hpp, torch_test_support.hpp   shared helpers
//   tests/models/kda_*_test.cpp    LibTorch forms vs each other and hand values; gates, layer, bench
//   tests/models/ops_seam_test.cpp the seams dispatch to registered implementations
//
// Per head, with state S (K x V), the kernels compute exactly the recurrence of fla's
// naive_recurrent_kda (decay, then delta update, then read):
//   q_t = scale * q_t / |q_t|,  k_t = k_t / |k_t|        (L2 norm with eps 1e-6, optional)
//   g_t = lower_bound * sigmoid(exp(A_log[h]) * (g_raw_t + dt_bias[h]))      (per key channel)
//         or, when the caller passes g_log_decay, that fp32 log decay as given (in [lower_bound, 0])
//   beta_t = sigmoid(beta_logit_t)                       (optional: beta may be given directly)
//   S = diag(exp(g_t)) S;  S = S + beta_t k_t (v_t - S^T k_t)^T;  o_t = S^T q_t
//
// Layouts (row-major, innermost last; tokens are b*T + t, or cu_seqlens[n] + t when variable length):
//   q, k, g: (tokens, H, K) bf16     v, out: (tokens, H, V) bf16     beta: (tokens, H) bf16
//   A_log: (H) fp32     dt_bias: (H, K) fp32     states: (N, H, K, V) fp32 (fla's [K, V] layout)
#include <cstddef>
#include <cstdint>
#include <string>

#include "k3lab/kernels/bf16.hpp"
#include "k3lab/kernels/cuda_runtime.hpp"

namespace k3lab::kernels {

// Tile length of the chunkwise algorithm. With the gate bounded below by -5, exp(+-cumsum g) over
// 16 tokens stays within fp32/bf16 range (|cumsum| <= 80 < 88.7), so the intra-tile products factorise.
inline constexpr int kKdaTile = 16;
// Head dimensions must be multiples of 16 (tensor-core tiles) and at most this.
inline constexpr int kKdaMaxHeadDim = 128;

// How the block-level matrix products inside the kernels are computed.
enum class KdaMath {
  kFp32Scalar,    // fp32 FMA on CUDA cores: the simple path, also the benchmark baseline
  kTensorCoreTf32 // WMMA m16n16k8 tf32 inputs, fp32 accumulation (state stays fp32)
};

struct KdaShape {
  std::int64_t batch = 0;      // B; must be 1 when cu_seqlens is given
  std::int64_t seq_len = 0;    // T per batch row; total tokens when cu_seqlens is given
  std::int64_t heads = 0;      // H
  std::int64_t key_dim = 0;    // K
  std::int64_t value_dim = 0;  // V
  std::int64_t num_seqs = 0;   // N: B without cu_seqlens; cu_seqlens then holds N+1 offsets

  std::int64_t tokens() const { return batch * seq_len; }
};

struct KdaOptions {
  float scale = 0.0f;          // q scale; 0 means key_dim^-0.5
  float lower_bound = -5.0f;   // gate lower bound, in [-5, 0)
  bool l2norm_qk = true;       // L2-normalise q and k inside the kernel
  bool beta_is_logits = true;  // apply sigmoid to beta inside the kernel
  KdaMath math = KdaMath::kTensorCoreTf32;

  float resolved_scale(std::int64_t key_dim) const;
};

struct KdaForwardArgs {
  const Bf16* q = nullptr;              // (tokens, H, K)
  const Bf16* k = nullptr;              // (tokens, H, K)
  const Bf16* v = nullptr;              // (tokens, H, V)
  const Bf16* g = nullptr;              // (tokens, H, K) raw gate, before the activation
  const Bf16* beta = nullptr;           // (tokens, H)
  const float* a_log = nullptr;         // (H)
  const float* dt_bias = nullptr;       // (H, K)
  // Alternative to g/a_log/dt_bias: the activated gate (log decay) itself, (tokens, H, K) fp32.
  // Every value must lie in [lower_bound, 0]: the kernels cannot check device values, and below
  // -5 per token the 16-token factorisation can overflow.
  const float* g_log_decay = nullptr;
  const float* initial_state = nullptr; // (N, H, K, V) or null for zeros
  const std::int64_t* cu_seqlens = nullptr;  // (N + 1) device offsets, or null for fixed length
  Bf16* out = nullptr;                  // (tokens, H, V); may be null (only states wanted)
  float* final_state = nullptr;         // (N, H, K, V) or null
  // Optional: the state at the start of every tile, (kda_tile_count_bound, H, K, V) fp32; the
  // backward pass fills this itself, callers normally leave it null.
  float* tile_states = nullptr;
};

struct KdaBackwardArgs {
  KdaForwardArgs forward;               // the same inputs as the forward call (outputs ignored)
  const Bf16* d_out = nullptr;          // (tokens, H, V)
  const float* d_final_state = nullptr; // (N, H, K, V) or null for zeros
  Bf16* dq = nullptr;                   // (tokens, H, K)
  Bf16* dk = nullptr;                   // (tokens, H, K)
  Bf16* dv = nullptr;                   // (tokens, H, V)
  Bf16* dg = nullptr;                   // (tokens, H, K) gradient of the raw gate
  Bf16* dbeta = nullptr;                // (tokens, H) gradient of beta as given (logits or not)
  float* da_log = nullptr;              // (H)
  float* ddt_bias = nullptr;            // (H, K)
  float* dg_log_decay = nullptr;        // (tokens, H, K) instead of dg/da_log/ddt_bias when the
                                        // forward inputs carry g_log_decay
  float* d_initial_state = nullptr;     // (N, H, K, V) or null
  void* workspace = nullptr;            // kda_backward_workspace_bytes(shape) bytes, 256-byte aligned
};

// Why the kernels cannot take `shape`, as a sentence that names the fix; empty when they can.
std::string kda_shape_problem(const KdaShape& shape);

// The rules on the options that every KDA entry shares (the launchers, the emulator and the LibTorch
// adapter models::kda_chunkwise_kernel): lower_bound in [-5, 0), scale finite and >= 0. Throws
// std::invalid_argument, naming the field and the fix.
void kda_validate_options(const KdaOptions& options);

// Both of the above: throws std::invalid_argument when the shape or options cannot run.
void kda_validate(const KdaShape& shape, const KdaOptions& options);

// Upper bound on the number of 16-token tiles over all sequences: ceil(tokens / 16) + N.
std::int64_t kda_tile_count_bound(const KdaShape& shape);

// Device workspace the backward pass needs (tile states plus per-sequence gate partial sums).
std::size_t kda_backward_workspace_bytes(const KdaShape& shape);

// Shared memory one block of each kernel uses (bytes); useful for capacity checks and docs.
std::size_t kda_forward_smem_bytes(const KdaShape& shape);
std::size_t kda_backward_smem_bytes(const KdaShape& shape);

// Asynchronous launches on `stream`. They throw std::invalid_argument for bad sizes or missing
// pointers and std::runtime_error when the build has no CUDA or a launch fails.
void kda_forward(const KdaShape& shape, const KdaOptions& options, const KdaForwardArgs& args,
                 Stream stream);
void kda_backward(const KdaShape& shape, const KdaOptions& options, const KdaBackwardArgs& args,
                  Stream stream);

// The same kernel bodies run on the host, one simulated thread after another between barriers
// (host pointers everywhere; cu_seqlens on the host too). Slow; used to test the kernel logic on
// machines without a GPU. `reverse_thread_order` runs the simulated threads backwards, which
// changes the result if two threads race within one phase. With KdaMath::kTensorCoreTf32 every
// product rounds its operands to tf32 as the tensor cores do, so the emulation also predicts that
// path's accuracy.
struct KdaEmulationOptions {
  bool reverse_thread_order = false;
};
void kda_forward_emulated(const KdaShape& shape, const KdaOptions& options,
                          const KdaForwardArgs& args, const KdaEmulationOptions& emulation = {});
void kda_backward_emulated(const KdaShape& shape, const KdaOptions& options,
                           const KdaBackwardArgs& args, const KdaEmulationOptions& emulation = {});

}  // namespace k3lab::kernels
