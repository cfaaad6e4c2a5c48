#pragma once
// SiTU-GLU (Kimi K3 activation), fused elementwise forward and backward kernels.
//   out = [beta_gate * tanh(gate / beta_gate) * sigmoid(gate)] * [beta_up * tanh(up / beta_up)]
// K3 uses beta_gate = 4, beta_up = 25. Math in fp32 whatever the storage type.
// Matrices are (rows, cols) with a row stride per operand, so `gate` and `up` may be the two halves
// of one fused (rows, 2 * cols) projection output.
#include <cstdint>

#include "k3lab/kernels/bf16.hpp"
#include "k3lab/kernels/cuda_runtime.hpp"

namespace k3lab::kernels {

inline constexpr float kSituBetaGate = 4.0f;
inline constexpr float kSituBetaUp = 25.0f;

struct SituGluShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t gate_stride = 0;  // elements between rows of gate (and d_gate); >= cols
  std::int64_t up_stride = 0;    // elements between rows of up (and d_up); >= cols
  std::int64_t out_stride = 0;   // elements between rows of out (and d_out); >= cols

  static SituGluShape contiguous(std::int64_t rows, std::int64_t cols);
};

struct SituGluBetas {
  float gate = kSituBetaGate;
  float up = kSituBetaUp;
};

// Throws std::invalid_argument (sizes, strides, betas) naming the field and the fix.
void situ_glu_validate(const SituGluShape& shape, const SituGluBetas& betas);

void situ_glu_forward(const SituGluShape& shape, const SituGluBetas& betas, const Bf16* gate,
                      const Bf16* up, Bf16* out, Stream stream);
void situ_glu_forward(const SituGluShape& shape, const SituGluBetas& betas, const float* gate,
                      const float* up, float* out, Stream stream);

// d_gate and d_up use the gate and up strides.
void situ_glu_backward(const SituGluShape& shape, const SituGluBetas& betas, const Bf16* gate,
                       const Bf16* up, const Bf16* d_out, Bf16* d_gate, Bf16* d_up, Stream stream);
void situ_glu_backward(const SituGluShape& shape, const SituGluBetas& betas, const float* gate,
                       const float* up, const float* d_out, float* d_gate, float* d_up,
                       Stream stream);

// The unfused baseline: the same result from a chain of one-operation kernels (what an eager
// framework launches), used by the benchmark to show what fusion saves. fp32 scratch of
// 3 * rows * cols floats.
void situ_glu_forward_unfused(const SituGluShape& shape, const SituGluBetas& betas,
                              const Bf16* gate, const Bf16* up, Bf16* out, float* scratch,
                              Stream stream);

}  // namespace k3lab::kernels
