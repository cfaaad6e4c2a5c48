#pragma once
// The double-precision KDA reference: plain loops over host arrays, no LibTorch. The one gold
// that the kernel bodies (emulated and on the GPU) and the LibTorch adapter are tested against.
// - kda_recurrent_reference: the token-by-token recurrence (fla naive_recurrent_kda order).
// - kda_backward_reference: reverse-mode adjoint of the recurrence, for every input.
// Layouts and the math are those of k3lab/kernels/kda.hpp; sequences come from cu_seqlens.
#include <cstdint>
#include <vector>

namespace k3lab::kernels {

struct KdaHostProblem {
  std::int64_t heads = 0;      // H
  std::int64_t key_dim = 0;    // K
  std::int64_t value_dim = 0;  // V
  std::vector<std::int64_t> cu_seqlens;  // N + 1 offsets; fixed length B x T is {0, T, ..., B*T}
  double scale = 0.0;          // 0 means key_dim^-0.5
  double lower_bound = -5.0;
  bool l2norm_qk = true;
  bool beta_is_logits = true;
  bool gate_is_log_decay = false;  // g holds the activated log decay; a_log/dt_bias unused

  std::int64_t num_seqs() const;
  std::int64_t tokens() const;
  double resolved_scale() const;
};

// cu_seqlens for `batch` sequences of `seq_len` tokens each.
std::vector<std::int64_t> fixed_length_offsets(std::int64_t batch, std::int64_t seq_len);

struct KdaHostInputs {
  std::vector<double> q;              // (tokens, H, K) before the L2 norm
  std::vector<double> k;              // (tokens, H, K)
  std::vector<double> v;              // (tokens, H, V)
  std::vector<double> g;              // (tokens, H, K) raw gate (or the log decay, see problem)
  std::vector<double> beta;           // (tokens, H) logits when beta_is_logits
  std::vector<double> a_log;          // (H)
  std::vector<double> dt_bias;        // (H, K)
  std::vector<double> initial_state;  // (N, H, K, V), or empty for zeros
};

struct KdaHostOutputs {
  std::vector<double> out;          // (tokens, H, V)
  std::vector<double> final_state;  // (N, H, K, V)
};

struct KdaHostGrads {
  std::vector<double> dq, dk, dv, dg, dbeta;  // shaped like the inputs
  std::vector<double> da_log;                 // (H); empty for a log-decay gate
  std::vector<double> ddt_bias;               // (H, K); empty for a log-decay gate
  std::vector<double> d_initial_state;        // (N, H, K, V)
};

// Throws std::invalid_argument when sizes disagree with the problem.
void kda_check_host_inputs(const KdaHostProblem& problem, const KdaHostInputs& inputs);

// The bounded gate: lower_bound * sigmoid(exp(a_log) * (g_raw + dt_bias)).
double kda_bounded_gate(double g_raw, double a_log, double dt_bias, double lower_bound);

KdaHostOutputs kda_recurrent_reference(const KdaHostProblem& problem, const KdaHostInputs& inputs);

// Gradients of  sum(d_out * out) + sum(d_final_state * final_state);  d_final_state may be empty.
KdaHostGrads kda_backward_reference(const KdaHostProblem& problem, const KdaHostInputs& inputs,
                                    const std::vector<double>& d_out,
                                    const std::vector<double>& d_final_state);

}  // namespace k3lab::kernels
