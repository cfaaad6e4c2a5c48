#pragma once
// Shared helpers for the kernel tests: a seeded generator (fresh seed per run, printed, and
// overridable with K3LAB_TEST_SEED), fla's RMSE-ratio comparison, and KDA input generation.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "k3lab/kernels/bf16.hpp"
#include "k3lab/kernels/kda_reference.hpp"

namespace k3lab::kernels::testing {

// xoshiro256** seeded through splitmix64; normals by Box-Muller (no std::*_distribution).
class TestRng {
 public:
  explicit TestRng(std::uint64_t seed) {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word = z ^ (z >> 31);
    }
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  double normal(double mean = 0.0, double stddev = 1.0) {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4]{};
};

// A fresh seed every run (tests must not pass only for one draw); K3LAB_TEST_SEED reproduces one.
inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("K3LAB_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  std::random_device device;
  const auto now = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  return (static_cast<std::uint64_t>(device()) << 32) ^ device() ^ now;
}

inline TestRng seeded_rng() {
  const std::uint64_t seed = test_seed();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::cout << "[ seed     ] K3LAB_TEST_SEED=" << seed << "\n";
  return TestRng(seed);
}

// fla's assert_close: pass when max |diff| <= abs_floor (fla: 1e-6) or RMSE(diff) / RMS(ref) < ratio. Any NaN or
// Inf in `got` fails.
inline ::testing::AssertionResult close_by_rmse_ratio(const std::string& name,
                                                      const std::vector<double>& ref,
                                                      const std::vector<double>& got,
                                                      double ratio,
                                                      double abs_floor = 1e-6) {
  if (ref.size() != got.size()) {
    return ::testing::AssertionFailure() << name << ": sizes differ (" << ref.size() << " vs "
                                         << got.size() << ")";
  }
  double diff2 = 0.0, ref2 = 0.0, max_abs = 0.0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++bad;
      continue;
    }
    const double d = ref[i] - got[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    max_abs = std::max(max_abs, std::abs(d));
  }
  if (bad > 0) {
    return ::testing::AssertionFailure() << name << ": " << bad << " of " << got.size()
                                         << " values are NaN or Inf";
  }
  const double n = static_cast<double>(std::max<std::size_t>(ref.size(), 1));
  const double err_ratio = std::sqrt(diff2 / n) / std::max(std::sqrt(ref2 / n), 1e-300);
  if (max_abs <= abs_floor || err_ratio < ratio) {
    return ::testing::AssertionSuccess() << name << ": err_ratio " << err_ratio;
  }
  return ::testing::AssertionFailure() << name << ": err_ratio " << err_ratio << " >= " << ratio
                                       << " (max |diff| " << max_abs << ")";
}

// The kernel tests compare against exact double references, so they drop fla's absolute escape
// hatch (near the gate bound, gate gradients are ~1e-6 and would pass it whatever their value) and
// log every ratio, which the GPU check's output keeps.
#define K3LAB_EXPECT_CLOSE(name, ref, got, ratio)                                                 \
  do {                                                                                           \
    const ::testing::AssertionResult k3lab_result_ =                                             \
        ::k3lab::kernels::testing::close_by_rmse_ratio(name, ref, got, ratio, 0.0);              \
    std::cout << "[ compare  ] " << k3lab_result_.message() << "\n";                             \
    EXPECT_TRUE(k3lab_result_);                                                                  \
  } while (0)

// d A_log and d dt_bias are sums of many signed per-token terms: their RMS-ratio against the
// (possibly small, for one head even a single) true sum is noisy. Compare them instead relative to
// the size of what is summed: sqrt(sum over outputs of sum over terms of term^2), the terms being
// the reference's per-element gate gradients (times g + dt_bias for A_log).
struct GateParamScales {
  std::vector<double> da_log;    // (H)
  std::vector<double> ddt_bias;  // (H, K)
};

inline GateParamScales gate_param_scales(const KdaHostProblem& p, const KdaHostInputs& in,
                                         const KdaHostGrads& gold) {
  const std::int64_t H = p.heads, K = p.key_dim, T = p.tokens();
  GateParamScales s{std::vector<double>(H, 0.0), std::vector<double>(H * K, 0.0)};
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t h = 0; h < H; ++h) {
      for (std::int64_t c = 0; c < K; ++c) {
        const double dx = gold.dg[(t * H + h) * K + c];
        const double term = dx * (in.g[(t * H + h) * K + c] + in.dt_bias[h * K + c]);
        s.da_log[h] += term * term;
        s.ddt_bias[h * K + c] += dx * dx;
      }
    }
  }
  for (auto& v : s.da_log) v = std::sqrt(v);
  for (auto& v : s.ddt_bias) v = std::sqrt(v);
  return s;
}

inline ::testing::AssertionResult close_relative_to_scale(const std::string& name,
                                                          const std::vector<double>& ref,
                                                          const std::vector<double>& got,
                                                          const std::vector<double>& scale,
                                                          double ratio) {
  double diff2 = 0.0, scale2 = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return ::testing::AssertionFailure() << name << ": NaN or Inf";
    diff2 += (ref[i] - got[i]) * (ref[i] - got[i]);
    scale2 += scale[i] * scale[i];
  }
  const double err = std::sqrt(diff2) / std::max(std::sqrt(scale2), 1e-300);
  if (err < ratio) return ::testing::AssertionSuccess() << name << ": err/summand scale " << err;
  return ::testing::AssertionFailure() << name << ": err/summand scale " << err << " >= " << ratio;
}

#define K3LAB_EXPECT_CLOSE_TO_SCALE(name, ref, got, scale, ratio)                                \
  do {                                                                                           \
    const ::testing::AssertionResult k3lab_result_ =                                             \
        ::k3lab::kernels::testing::close_relative_to_scale(name, ref, got, scale, ratio);        \
    std::cout << "[ compare  ] " << k3lab_result_.message() << "\n";                             \
    EXPECT_TRUE(k3lab_result_);                                                                  \
  } while (0)

// Guards against comparisons that cannot fail: a reference made of zeros proves nothing.
inline double rms(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v * v;
  return std::sqrt(sum / static_cast<double>(std::max<std::size_t>(values.size(), 1)));
}

inline std::vector<double> normals(TestRng& rng, std::size_t count, double mean = 0.0,
                                   double stddev = 1.0) {
  std::vector<double> values(count);
  for (auto& v : values) v = rng.normal(mean, stddev);
  return values;
}

inline std::vector<double> uniforms(TestRng& rng, std::size_t count, double lo, double hi) {
  std::vector<double> values(count);
  for (auto& v : values) v = rng.uniform(lo, hi);
  return values;
}

// Values as a bf16 kernel input sees them.
inline void round_to_bf16_in_place(std::vector<double>& values) {
  for (auto& v : values) v = round_to_bf16(static_cast<float>(v));
}

inline std::vector<Bf16> to_bf16(const std::vector<double>& values) {
  std::vector<Bf16> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = float_to_bf16(static_cast<float>(values[i]));
  return out;
}

inline std::vector<float> to_float(const std::vector<double>& values) {
  return std::vector<float>(values.begin(), values.end());
}

inline std::vector<double> to_double(const std::vector<Bf16>& values) {
  std::vector<double> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = bf16_to_float(values[i]);
  return out;
}

inline std::vector<double> to_double(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

enum class GateRegime {
  kTypical,    // fla's in-kernel gate test: g_raw, A_log, dt_bias ~ N(0, 1)
  kNearBound,  // sigmoid saturated: every per-token log decay close to lower_bound
};

struct KdaCase {
  std::string name;
  std::vector<std::int64_t> cu_seqlens;
  std::int64_t heads = 2;
  std::int64_t key_dim = 32;
  std::int64_t value_dim = 32;
  bool initial_state = true;
  bool l2norm_qk = true;
  bool beta_is_logits = true;
  GateRegime gate = GateRegime::kTypical;
  double lower_bound = -5.0;
  bool log_decay_gate = false;  // pass the activated gate (fp32 log decay) instead of the raw one
};

inline KdaHostProblem make_problem(const KdaCase& c) {
  KdaHostProblem p;
  p.heads = c.heads;
  p.key_dim = c.key_dim;
  p.value_dim = c.value_dim;
  p.cu_seqlens = c.cu_seqlens;
  p.lower_bound = c.lower_bound;
  p.l2norm_qk = c.l2norm_qk;
  p.beta_is_logits = c.beta_is_logits;
  p.gate_is_log_decay = c.log_decay_gate;
  return p;
}

// Random inputs, already rounded to what bf16 (or fp32 for the fp32 tensors) kernels read.
inline KdaHostInputs make_inputs(const KdaCase& c, TestRng& rng) {
  const auto T = static_cast<std::size_t>(c.cu_seqlens.back());
  const auto H = static_cast<std::size_t>(c.heads);
  const auto K = static_cast<std::size_t>(c.key_dim);
  const auto V = static_cast<std::size_t>(c.value_dim);
  const auto N = c.cu_seqlens.size() - 1;
  KdaHostInputs in;
  // q, k ~ U(0, 1) as in fla's tests: all-positive keys are strongly correlated, a hard case for
  // the (I + A)^-1 solve. Without the L2 norm, keep |k| small so that the recurrence stays stable.
  const double qk_scale = c.l2norm_qk ? 1.0 : 1.0 / std::sqrt(static_cast<double>(K));
  in.q = uniforms(rng, T * H * K, 0.0, qk_scale);
  in.k = uniforms(rng, T * H * K, 0.0, qk_scale);
  in.v = normals(rng, T * H * V);
  if (c.gate == GateRegime::kNearBound) {
    in.g = normals(rng, T * H * K, 6.0, 1.0);
    in.a_log = uniforms(rng, H, 0.5, 1.5);
    in.dt_bias = uniforms(rng, H * K, 0.0, 1.0);
  } else {
    in.g = normals(rng, T * H * K);
    in.a_log = normals(rng, H);
    in.dt_bias = normals(rng, H * K);
  }
  in.beta = c.beta_is_logits ? normals(rng, T * H) : uniforms(rng, T * H, 0.05, 1.0);
  if (c.initial_state) in.initial_state = normals(rng, N * H * K * V);
  for (auto* bf16_input : {&in.q, &in.k, &in.v, &in.g, &in.beta}) round_to_bf16_in_place(*bf16_input);
  if (c.log_decay_gate) {
    // The activated gate itself, as a model layer computes it (fp32), then no A_log / dt_bias.
    for (std::size_t i = 0; i < in.g.size(); ++i) {
      const std::size_t h = (i / K) % H, ch = i % K;
      in.g[i] = kda_bounded_gate(in.g[i], in.a_log[h], in.dt_bias[h * K + ch], c.lower_bound);
    }
    in.a_log.clear();
    in.dt_bias.clear();
    for (auto& v : in.g) v = static_cast<float>(v);
  }
  for (auto* fp32_input : {&in.a_log, &in.dt_bias, &in.initial_state}) {
    for (auto& v : *fp32_input) v = static_cast<float>(v);
  }
  return in;
}

}  // namespace k3lab::kernels::testing
