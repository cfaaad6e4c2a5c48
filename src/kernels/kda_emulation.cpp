// Host emulation of the KDA kernels: the kernel bodies, one simulated block per (sequence, head).
#include <stdexcept>
#include <string>
#include <vector>

#include "host_block.hpp"
#include "k3lab/kernels/kda.hpp"
#include "kda_backward_body.hpp"
#include "kda_forward_body.hpp"
#include "kda_launch_params.hpp"

namespace k3lab::kernels {
namespace {

void check_host_offsets(const KdaShape& shape, const std::int64_t* cu_seqlens) {
  if (cu_seqlens == nullptr) return;
  if (cu_seqlens[0] != 0 || cu_seqlens[shape.num_seqs] != shape.seq_len) {
    throw std::invalid_argument("KDA emulation: cu_seqlens must start at 0 and end at seq_len (" +
                                std::to_string(shape.seq_len) + ")");
  }
  for (std::int64_t n = 0; n < shape.num_seqs; ++n) {
    if (cu_seqlens[n + 1] < cu_seqlens[n]) {
      throw std::invalid_argument("KDA emulation: cu_seqlens must be non-decreasing");
    }
  }
}

template <class Body>
void run_blocks(const KdaShape& shape, const KdaOptions& options, std::size_t smem_bytes,
                const KdaEmulationOptions& emulation, Body&& body) {
  std::vector<float> smem(smem_bytes / sizeof(float) + 8);
  detail::HostBlock block(emulation.reverse_thread_order,
                          options.math == KdaMath::kTensorCoreTf32);
  for (int n = 0; n < static_cast<int>(shape.num_seqs); ++n) {
    for (int h = 0; h < static_cast<int>(shape.heads); ++h) body(block, n, h, smem.data());
  }
}

}  // namespace

void kda_forward_emulated(const KdaShape& shape, const KdaOptions& options,
                          const KdaForwardArgs& args, const KdaEmulationOptions& emulation) {
  detail::check_forward_args(shape, options, args);
  check_host_offsets(shape, args.cu_seqlens);
  const detail::KdaParams p = detail::make_forward_params(shape, options, args);
  run_blocks(shape, options, kda_forward_smem_bytes(shape), emulation,
             [&](detail::HostBlock& block, int n, int h, float* smem) {
               detail::kda_forward_sequence(block, p, n, h, smem);
             });
}

void kda_backward_emulated(const KdaShape& shape, const KdaOptions& options,
                           const KdaBackwardArgs& args, const KdaEmulationOptions& emulation) {
  detail::check_backward_args(shape, options, args);
  check_host_offsets(shape, args.forward.cu_seqlens);
  const detail::KdaParams p = detail::make_backward_params(shape, options, args);
  // Pass 1: the forward body, saving the state at the start of every tile.
  detail::KdaParams states_pass = detail::make_forward_params(shape, options, args.forward);
  states_pass.out = nullptr;
  states_pass.final_state = nullptr;
  states_pass.tile_states = p.tile_states;
  run_blocks(shape, options, kda_forward_smem_bytes(shape), emulation,
             [&](detail::HostBlock& block, int n, int h, float* smem) {
               detail::kda_forward_sequence(block, states_pass, n, h, smem);
             });
  // Pass 2: the backward body.
  run_blocks(shape, options, kda_backward_smem_bytes(shape), emulation,
             [&](detail::HostBlock& block, int n, int h, float* smem) {
               detail::kda_backward_sequence(block, p, n, h, smem);
             });
  // Pass 3: sum the per-sequence gate partials in sequence order (deterministic).
  if (args.forward.g_log_decay != nullptr) return;
  const std::int64_t H = shape.heads, K = shape.key_dim;
  for (std::int64_t h = 0; h < H; ++h) {
    for (std::int64_t c = 0; c <= K; ++c) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < shape.num_seqs; ++n) sum += p.gate_partials[(n * H + h) * (K + 1) + c];
      if (c < K) {
        args.ddt_bias[h * K + c] = sum;
      } else {
        args.da_log[h] = sum;
      }
    }
  }
}

}  // namespace k3lab::kernels
