#include "k3lab/kernels/kda_reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::kernels {
namespace {

constexpr double kL2NormEps = 1e-6;
// Recompute window of the backward reference: states are kept every this many tokens.
constexpr std::int64_t kCheckpointEvery = 64;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

void expect_size(const std::vector<double>& values, std::size_t expected, const char* name) {
  if (values.size() != expected) {
    throw std::invalid_argument(std::string("KDA host inputs: ") + name + " has " +
                                std::to_string(values.size()) + " values, expected " +
                                std::to_string(expected) + " (see the layouts in kda.hpp)");
  }
}

// The per-token quantities after the fused preprocessing, for one (sequence, head).
struct PreparedSequence {
  std::int64_t length = 0;
  std::vector<double> q;          // (T, K) normalised and scaled
  std::vector<double> k;          // (T, K) normalised
  std::vector<double> v;          // (T, V)
  std::vector<double> gate;       // (T, K) activated gate (log decay, in (lower_bound, 0))
  std::vector<double> gate_sig;   // (T, K) sigmoid inside the gate activation (for the backward)
  std::vector<double> beta;       // (T)
  std::vector<double> q_norm;     // (T) sqrt(sum q^2 + eps), or 1 without the L2 norm
  std::vector<double> k_norm;     // (T)
};

PreparedSequence prepare_sequence(const KdaHostProblem& p, const KdaHostInputs& in, std::int64_t n,
                                  std::int64_t h) {
  const std::int64_t H = p.heads, K = p.key_dim, V = p.value_dim;
  const std::int64_t begin = p.cu_seqlens[n];
  PreparedSequence s;
  s.length = p.cu_seqlens[n + 1] - begin;
  const std::int64_t T = s.length;
  s.q.resize(T * K);
  s.k.resize(T * K);
  s.v.resize(T * V);
  s.gate.resize(T * K);
  s.gate_sig.resize(T * K);
  s.beta.resize(T);
  s.q_norm.assign(T, 1.0);
  s.k_norm.assign(T, 1.0);
  const double a = p.gate_is_log_decay ? 0.0 : std::exp(in.a_log[h]);
  const double scale = p.resolved_scale();
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t row = (begin + t) * H + h;
    if (p.l2norm_qk) {
      double qq = 0.0, kk = 0.0;
      for (std::int64_t c = 0; c < K; ++c) {
        qq += in.q[row * K + c] * in.q[row * K + c];
        kk += in.k[row * K + c] * in.k[row * K + c];
      }
      s.q_norm[t] = std::sqrt(qq + kL2NormEps);
      s.k_norm[t] = std::sqrt(kk + kL2NormEps);
    }
    for (std::int64_t c = 0; c < K; ++c) {
      s.q[t * K + c] = scale * in.q[row * K + c] / s.q_norm[t];
      s.k[t * K + c] = in.k[row * K + c] / s.k_norm[t];
      if (p.gate_is_log_decay) {
        s.gate[t * K + c] = in.g[row * K + c];
      } else {
        const double z = a * (in.g[row * K + c] + in.dt_bias[h * K + c]);
        s.gate_sig[t * K + c] = sigmoid(z);
        s.gate[t * K + c] = p.lower_bound * s.gate_sig[t * K + c];
      }
    }
    for (std::int64_t c = 0; c < V; ++c) s.v[t * V + c] = in.v[row * V + c];
    s.beta[t] = p.beta_is_logits ? sigmoid(in.beta[row]) : in.beta[row];
  }
  return s;
}

std::vector<double> initial_state_of(const KdaHostProblem& p, const KdaHostInputs& in,
                                     std::int64_t n, std::int64_t h) {
  const std::int64_t KV = p.key_dim * p.value_dim;
  if (in.initial_state.empty()) return std::vector<double>(KV, 0.0);
  const auto first = in.initial_state.begin() + (n * p.heads + h) * KV;
  return std::vector<double>(first, first + KV);
}

// One recurrence step on state S (K x V): decay, delta update, read. Returns u_t; writes o_t.
// `decayed` receives S after the decay (before the update), `recall` receives S'^T k.
void recurrent_step(std::int64_t K, std::int64_t V, const double* q, const double* k,
                    const double* v, const double* gate, double beta, std::vector<double>& S,
                    double* out, std::vector<double>* decayed, std::vector<double>& recall,
                    std::vector<double>& u) {
  for (std::int64_t r = 0; r < K; ++r) {
    const double decay = std::exp(gate[r]);
    for (std::int64_t c = 0; c < V; ++c) S[r * V + c] *= decay;
  }
  if (decayed) *decayed = S;
  std::fill(recall.begin(), recall.end(), 0.0);
  for (std::int64_t r = 0; r < K; ++r)
    for (std::int64_t c = 0; c < V; ++c) recall[c] += S[r * V + c] * k[r];
  for (std::int64_t c = 0; c < V; ++c) u[c] = beta * (v[c] - recall[c]);
  for (std::int64_t r = 0; r < K; ++r)
    for (std::int64_t c = 0; c < V; ++c) S[r * V + c] += k[r] * u[c];
  if (out) {
    for (std::int64_t c = 0; c < V; ++c) {
      double acc = 0.0;
      for (std::int64_t r = 0; r < K; ++r) acc += S[r * V + c] * q[r];
      out[c] = acc;
    }
  }
}

}  // namespace

std::int64_t KdaHostProblem::num_seqs() const {
  return cu_seqlens.empty() ? 0 : static_cast<std::int64_t>(cu_seqlens.size()) - 1;
}

std::int64_t KdaHostProblem::tokens() const { return cu_seqlens.empty() ? 0 : cu_seqlens.back(); }

double KdaHostProblem::resolved_scale() const {
  return scale != 0.0 ? scale : 1.0 / std::sqrt(static_cast<double>(key_dim));
}

std::vector<std::int64_t> fixed_length_offsets(std::int64_t batch, std::int64_t seq_len) {
  std::vector<std::int64_t> offsets(batch + 1);
  for (std::int64_t b = 0; b <= batch; ++b) offsets[b] = b * seq_len;
  return offsets;
}

double kda_bounded_gate(double g_raw, double a_log, double dt_bias, double lower_bound) {
  return lower_bound * sigmoid(std::exp(a_log) * (g_raw + dt_bias));
}

void kda_check_host_inputs(const KdaHostProblem& p, const KdaHostInputs& in) {
  if (p.heads <= 0 || p.key_dim <= 0 || p.value_dim <= 0) {
    throw std::invalid_argument("KDA host problem: heads, key_dim and value_dim must be positive");
  }
  if (p.cu_seqlens.size() < 2 || p.cu_seqlens.front() != 0) {
    throw std::invalid_argument(
        "KDA host problem: cu_seqlens must hold N+1 >= 2 offsets starting at 0 "
        "(use fixed_length_offsets(B, T) for fixed-length batches)");
  }
  for (std::size_t i = 1; i < p.cu_seqlens.size(); ++i) {
    if (p.cu_seqlens[i] < p.cu_seqlens[i - 1]) {
      throw std::invalid_argument("KDA host problem: cu_seqlens must be non-decreasing");
    }
  }
  const auto T = static_cast<std::size_t>(p.tokens());
  const auto H = static_cast<std::size_t>(p.heads);
  const auto K = static_cast<std::size_t>(p.key_dim);
  const auto V = static_cast<std::size_t>(p.value_dim);
  const auto N = static_cast<std::size_t>(p.num_seqs());
  expect_size(in.q, T * H * K, "q");
  expect_size(in.k, T * H * K, "k");
  expect_size(in.v, T * H * V, "v");
  expect_size(in.g, T * H * K, "g");
  expect_size(in.beta, T * H, "beta");
  if (!p.gate_is_log_decay) {
    expect_size(in.a_log, H, "a_log");
    expect_size(in.dt_bias, H * K, "dt_bias");
  }
  if (!in.initial_state.empty()) expect_size(in.initial_state, N * H * K * V, "initial_state");
}

KdaHostOutputs kda_recurrent_reference(const KdaHostProblem& p, const KdaHostInputs& in) {
  kda_check_host_inputs(p, in);
  const std::int64_t H = p.heads, K = p.key_dim, V = p.value_dim, N = p.num_seqs();
  KdaHostOutputs result;
  result.out.assign(p.tokens() * H * V, 0.0);
  result.final_state.assign(N * H * K * V, 0.0);
  std::vector<double> recall(V), u(V);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t h = 0; h < H; ++h) {
      const PreparedSequence s = prepare_sequence(p, in, n, h);
      std::vector<double> S = initial_state_of(p, in, n, h);
      for (std::int64_t t = 0; t < s.length; ++t) {
        double* out = &result.out[((p.cu_seqlens[n] + t) * H + h) * V];
        recurrent_step(K, V, &s.q[t * K], &s.k[t * K], &s.v[t * V], &s.gate[t * K], s.beta[t], S,
                       out, nullptr, recall, u);
      }
      std::copy(S.begin(), S.end(), result.final_state.begin() + (n * H + h) * K * V);
    }
  }
  return result;
}

KdaHostGrads kda_backward_reference(const KdaHostProblem& p, const KdaHostInputs& in,
                                    const std::vector<double>& d_out,
                                    const std::vector<double>& d_final_state) {
  kda_check_host_inputs(p, in);
  const std::int64_t H = p.heads, K = p.key_dim, V = p.value_dim, N = p.num_seqs();
  const std::int64_t KV = K * V;
  expect_size(d_out, p.tokens() * H * V, "d_out");
  if (!d_final_state.empty()) expect_size(d_final_state, N * H * KV, "d_final_state");

  KdaHostGrads grads;
  grads.dq.assign(in.q.size(), 0.0);
  grads.dk.assign(in.k.size(), 0.0);
  grads.dv.assign(in.v.size(), 0.0);
  grads.dg.assign(in.g.size(), 0.0);
  grads.dbeta.assign(in.beta.size(), 0.0);
  if (!p.gate_is_log_decay) {
    grads.da_log.assign(H, 0.0);
    grads.ddt_bias.assign(H * K, 0.0);
  }
  grads.d_initial_state.assign(N * H * KV, 0.0);
  const double scale = p.resolved_scale();

  std::vector<double> recall(V), u(V), du(V), dr(V), decayed(KV), dS(KV);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t h = 0; h < H; ++h) {
      const PreparedSequence s = prepare_sequence(p, in, n, h);
      const std::int64_t T = s.length;
      // Forward pass keeping the state before every checkpoint window.
      std::vector<std::vector<double>> checkpoints;
      std::vector<double> S = initial_state_of(p, in, n, h);
      for (std::int64_t t = 0; t < T; ++t) {
        if (t % kCheckpointEvery == 0) checkpoints.push_back(S);
        recurrent_step(K, V, &s.q[t * K], &s.k[t * K], &s.v[t * V], &s.gate[t * K], s.beta[t], S,
                       nullptr, nullptr, recall, u);
      }
      if (d_final_state.empty()) {
        std::fill(dS.begin(), dS.end(), 0.0);
      } else {
        std::copy_n(d_final_state.begin() + (n * H + h) * KV, KV, dS.begin());
      }
      // Gradients of the normalised q, k and of the activated gate and beta, per token.
      std::vector<double> dqn(T * K, 0.0), dkn(T * K, 0.0), dgate(T * K, 0.0), dbeta(T, 0.0);
      std::vector<std::vector<double>> window_states;  // state before each token of the window
      for (std::int64_t w = static_cast<std::int64_t>(checkpoints.size()) - 1; w >= 0; --w) {
        const std::int64_t t0 = w * kCheckpointEvery;
        const std::int64_t t1 = std::min(T, t0 + kCheckpointEvery);
        window_states.clear();
        S = checkpoints[w];
        for (std::int64_t t = t0; t < t1; ++t) {
          window_states.push_back(S);
          recurrent_step(K, V, &s.q[t * K], &s.k[t * K], &s.v[t * V], &s.gate[t * K], s.beta[t],
                         S, nullptr, nullptr, recall, u);
        }
        for (std::int64_t t = t1 - 1; t >= t0; --t) {
          S = window_states[t - t0];
          recurrent_step(K, V, &s.q[t * K], &s.k[t * K], &s.v[t * V], &s.gate[t * K], s.beta[t],
                         S, nullptr, &decayed, recall, u);
          // S now holds S_t; decayed holds S'_t; recall = S'_t^T k_t; u = beta (v - recall).
          const double* q = &s.q[t * K];
          const double* k = &s.k[t * K];
          const double* dO = &d_out[((p.cu_seqlens[n] + t) * H + h) * V];
          // o = S_t^T q
          for (std::int64_t r = 0; r < K; ++r) {
            double acc = 0.0;
            for (std::int64_t c = 0; c < V; ++c) {
              acc += S[r * V + c] * dO[c];
              dS[r * V + c] += q[r] * dO[c];
            }
            dqn[t * K + r] += acc;
          }
          // S_t = S' + k u^T
          std::fill(du.begin(), du.end(), 0.0);
          for (std::int64_t r = 0; r < K; ++r) {
            double acc = 0.0;
            for (std::int64_t c = 0; c < V; ++c) {
              acc += dS[r * V + c] * u[c];
              du[c] += dS[r * V + c] * k[r];
            }
            dkn[t * K + r] += acc;
          }
          // u = beta (v - recall)
          double db = 0.0;
          for (std::int64_t c = 0; c < V; ++c) {
            db += du[c] * (s.v[t * V + c] - recall[c]);
            grads.dv[((p.cu_seqlens[n] + t) * H + h) * V + c] = s.beta[t] * du[c];
            dr[c] = -s.beta[t] * du[c];
          }
          dbeta[t] = db;
          // recall = S'^T k;  S' = diag(exp(g)) S_{t-1}
          for (std::int64_t r = 0; r < K; ++r) {
            double dk_acc = 0.0, dg_acc = 0.0;
            for (std::int64_t c = 0; c < V; ++c) {
              dS[r * V + c] += k[r] * dr[c];
              dk_acc += decayed[r * V + c] * dr[c];
              dg_acc += decayed[r * V + c] * dS[r * V + c];
            }
            dkn[t * K + r] += dk_acc;
            dgate[t * K + r] = dg_acc;
            const double decay = std::exp(s.gate[t * K + r]);
            for (std::int64_t c = 0; c < V; ++c) dS[r * V + c] *= decay;
          }
        }
      }
      std::copy(dS.begin(), dS.end(), grads.d_initial_state.begin() + (n * H + h) * KV);

      // Chain rule through the preprocessing (L2 norm and scale, gate activation, beta sigmoid).
      const double a = p.gate_is_log_decay ? 0.0 : std::exp(in.a_log[h]);
      for (std::int64_t t = 0; t < T; ++t) {
        const std::int64_t row = (p.cu_seqlens[n] + t) * H + h;
        // q_scaled = scale * x / |x|:  dx = scale * (dqs - qhat (qhat . dqs)) / |x|
        double q_dot = 0.0, k_dot = 0.0;
        for (std::int64_t c = 0; c < K; ++c) {
          q_dot += (s.q[t * K + c] / scale) * dqn[t * K + c];
          k_dot += s.k[t * K + c] * dkn[t * K + c];
        }
        for (std::int64_t c = 0; c < K; ++c) {
          const double qhat = s.q[t * K + c] / scale;
          if (p.l2norm_qk) {
            grads.dq[row * K + c] = scale * (dqn[t * K + c] - qhat * q_dot) / s.q_norm[t];
            grads.dk[row * K + c] = (dkn[t * K + c] - s.k[t * K + c] * k_dot) / s.k_norm[t];
          } else {
            grads.dq[row * K + c] = scale * dqn[t * K + c];
            grads.dk[row * K + c] = dkn[t * K + c];
          }
          if (p.gate_is_log_decay) {
            grads.dg[row * K + c] = dgate[t * K + c];
            continue;
          }
          const double sig = s.gate_sig[t * K + c];
          const double dz = dgate[t * K + c] * p.lower_bound * sig * (1.0 - sig);
          const double shifted = in.g[row * K + c] + in.dt_bias[h * K + c];
          grads.dg[row * K + c] = dz * a;
          grads.ddt_bias[h * K + c] += dz * a;
          grads.da_log[h] += dz * a * shifted;
        }
        grads.dbeta[row] =
            p.beta_is_logits ? dbeta[t] * s.beta[t] * (1.0 - s.beta[t]) : dbeta[t];
      }
    }
  }
  return grads;
}

}  // namespace k3lab::kernels
