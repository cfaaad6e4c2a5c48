#pragma once
// Host-side packing of a KDA test case into the kernels' argument layout (bf16/fp32 arrays),
// NaN-poisoned outputs, and the conversion of results back to doubles for comparison. Used by the
// emulation tests (host pointers) and the GPU tests (which copy these arrays to the device).
#include <cstdint>
#include <limits>
#include <vector>

#include "k3lab/kernels/kda.hpp"
#include "k3lab/kernels/kda_reference.hpp"
#include "kernel_test_support.hpp"

namespace k3lab::kernels::testing {

struct KdaPacked {
  KdaShape shape;
  bool varlen = true;
  std::vector<std::int64_t> cu_seqlens;
  std::vector<Bf16> q, k, v, g, beta;
  std::vector<float> a_log, dt_bias, initial_state;
  std::vector<float> g_log_decay;  // instead of g / a_log / dt_bias for log-decay cases
};

// Fixed length (no cu_seqlens) when `as_batch` and every sequence has the same length.
inline KdaPacked pack_inputs(const KdaCase& c, const KdaHostInputs& in, bool as_batch) {
  KdaPacked p;
  const std::int64_t N = static_cast<std::int64_t>(c.cu_seqlens.size()) - 1;
  bool uniform = true;
  for (std::int64_t n = 0; n < N; ++n) {
    uniform = uniform && (c.cu_seqlens[n + 1] - c.cu_seqlens[n] == c.cu_seqlens[1]);
  }
  p.varlen = !(as_batch && uniform);
  p.shape.heads = c.heads;
  p.shape.key_dim = c.key_dim;
  p.shape.value_dim = c.value_dim;
  p.shape.num_seqs = N;
  if (p.varlen) {
    p.shape.batch = 1;
    p.shape.seq_len = c.cu_seqlens.back();
    p.cu_seqlens = c.cu_seqlens;
  } else {
    p.shape.batch = N;
    p.shape.seq_len = c.cu_seqlens[1];
  }
  p.q = to_bf16(in.q);
  p.k = to_bf16(in.k);
  p.v = to_bf16(in.v);
  if (c.log_decay_gate) {
    p.g_log_decay = to_float(in.g);
  } else {
    p.g = to_bf16(in.g);
  }
  p.beta = to_bf16(in.beta);
  p.a_log = to_float(in.a_log);
  p.dt_bias = to_float(in.dt_bias);
  p.initial_state = to_float(in.initial_state);
  return p;
}

inline KdaOptions options_for(const KdaCase& c, KdaMath math = KdaMath::kTensorCoreTf32) {
  KdaOptions o;
  o.lower_bound = static_cast<float>(c.lower_bound);
  o.l2norm_qk = c.l2norm_qk;
  o.beta_is_logits = c.beta_is_logits;
  o.math = math;
  return o;
}

inline Bf16 bf16_nan() { return Bf16{0xffffu}; }
inline float float_nan() { return std::numeric_limits<float>::quiet_NaN(); }

// Every case the kernel tests share: lengths that are not multiples of the tile, variable-length
// batches (with an empty sequence), gates near the bound, K != V, the largest head dimension,
// no initial state, no in-kernel L2 norm or sigmoid.
inline std::vector<KdaCase> kernel_cases(bool small) {
  const std::int64_t big = small ? 1 : 8;
  return {
      {"fixed_batch", fixed_length_offsets(2, 37 * big), 2, 32, 32},
      {"varlen_k_ne_v", {0, 15, 16, 16, 49, 49 + 33 * big}, 2, 32, 48},
      {"gate_near_bound", fixed_length_offsets(1, 50 * big), 1, 16, 16, true, true, true,
       GateRegime::kNearBound},
      {"no_initial_state", fixed_length_offsets(1, 33 * big), 2, 64, 32, false},
      {"no_l2norm_beta_given", {0, 21, 21 + 19 * big}, 1, 16, 32, true, false, false},
      {"head_dim_128", fixed_length_offsets(1, 20 * big), 1, 128, 128},
      {"log_decay_gate", {0, 30, 30 + 17 * big}, 2, 32, 16, true, false, false,
       GateRegime::kTypical, -5.0, true},
      {"log_decay_near_bound", fixed_length_offsets(2, 18 * big), 1, 16, 16, false, true, true,
       GateRegime::kNearBound, -5.0, true},
  };
}

}  // namespace k3lab::kernels::testing
