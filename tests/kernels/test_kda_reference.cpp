// Unit tests of the double KDA reference (label unit, CPU only):
// - the recurrence against a hand-computed trace and the fla gate formula;
// - the backward reference against central finite differences, in double.
// The chunkwise algorithm is checked against this reference where it is implemented: the kernel
// bodies (test_kda_emulation.cpp, test_kda_gpu.cpp) and the LibTorch form (test_kda_adapter.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "k3lab/kernels/kda_reference.hpp"
#include "kernel_test_support.hpp"

namespace k3lab::kernels {
namespace {

using testing::close_by_rmse_ratio;
using testing::GateRegime;
using testing::KdaCase;
using testing::make_inputs;
using testing::make_problem;

TEST(KdaReference, BoundedGateMatchesFlaFormula) {
  // lower_bound * sigmoid(exp(A_log) * (g + dt_bias)), fla gate.py naive_kda_lowerbound_gate.
  const double g = 0.3, a_log = 0.7, bias = -0.2, lb = -5.0;
  const double z = std::exp(a_log) * (g + bias);
  EXPECT_DOUBLE_EQ(kda_bounded_gate(g, a_log, bias, lb), lb / (1.0 + std::exp(-z)));
  EXPECT_GT(kda_bounded_gate(10.0, 0.0, 0.0, lb), lb);
  EXPECT_LT(kda_bounded_gate(-10.0, 0.0, 0.0, lb), 0.0);
}

TEST(KdaReference, RecurrenceMatchesHandTrace) {
  // K = V = 1, no L2 norm, beta given directly, scale 1: every step is scalar arithmetic.
  KdaHostProblem p;
  p.heads = 1;
  p.key_dim = 1;
  p.value_dim = 1;
  p.cu_seqlens = {0, 2};
  p.scale = 1.0;
  p.l2norm_qk = false;
  p.beta_is_logits = false;
  KdaHostInputs in;
  in.q = {2.0, -1.0};
  in.k = {0.5, 1.5};
  in.v = {3.0, -2.0};
  in.g = {0.1, -0.4};
  in.beta = {0.8, 0.3};
  in.a_log = {0.2};
  in.dt_bias = {0.05};
  in.initial_state = {1.0};
  double S = 1.0;
  std::vector<double> expected_out;
  for (int t = 0; t < 2; ++t) {
    S *= std::exp(kda_bounded_gate(in.g[t], 0.2, 0.05, -5.0));
    S += in.beta[t] * in.k[t] * (in.v[t] - S * in.k[t]);
    expected_out.push_back(S * in.q[t]);
  }
  const KdaHostOutputs got = kda_recurrent_reference(p, in);
  ASSERT_EQ(got.out.size(), 2u);
  EXPECT_NEAR(got.out[0], expected_out[0], 1e-14);
  EXPECT_NEAR(got.out[1], expected_out[1], 1e-14);
  EXPECT_NEAR(got.final_state[0], S, 1e-14);
}

TEST(KdaReference, RejectsMismatchedSizes) {
  KdaCase c{"bad", {0, 4}, 1, 4, 4};
  testing::TestRng rng(1);
  KdaHostInputs in = make_inputs(c, rng);
  in.v.pop_back();
  EXPECT_THROW(kda_recurrent_reference(make_problem(c), in), std::invalid_argument);
  KdaHostProblem p = make_problem(c);
  p.cu_seqlens = {0, 4, 2};
  EXPECT_THROW(kda_recurrent_reference(p, make_inputs(c, rng)), std::invalid_argument);
}

// Central differences of L = sum(d_out * out) + sum(d_final * final_state) for every input value.
void expect_gradient_matches_fd(const KdaHostProblem& p, KdaHostInputs in, testing::TestRng& rng) {
  const std::int64_t N = p.num_seqs(), H = p.heads, K = p.key_dim, V = p.value_dim;
  const std::vector<double> d_out = testing::normals(rng, p.tokens() * H * V);
  const std::vector<double> d_final = testing::normals(rng, N * H * K * V);
  const KdaHostGrads grads = kda_backward_reference(p, in, d_out, d_final);

  const auto loss = [&](const KdaHostInputs& x) {
    const KdaHostOutputs o = kda_recurrent_reference(p, x);
    double total = 0.0;
    for (std::size_t i = 0; i < o.out.size(); ++i) total += d_out[i] * o.out[i];
    for (std::size_t i = 0; i < o.final_state.size(); ++i) total += d_final[i] * o.final_state[i];
    return total;
  };
  // The fourth-order stencil (L(x-2h) - 8 L(x-h) + 8 L(x+h) - L(x+2h)) / 12h: its truncation error is
  // O(h^4), so a step of 2e-5 keeps it negligible while rounding in L (about 2e-16 |L| / h) stays near
  // 1e-11. The two-point difference at h = 1e-6 rounded near 1e-10, over the bound on gradients as small
  // as d_initial_state's for about 2% of seeds; at h = 1e-3 truncation was too large. 3,000 repeats of
  // the four tests: no failure.
  const double h = 2e-5;
  const auto check = [&](const char* name, std::vector<double> KdaHostInputs::*field,
                         const std::vector<double>& analytic) {
    SCOPED_TRACE(name);
    std::vector<double>& values = in.*field;
    ASSERT_EQ(values.size(), analytic.size());
    std::vector<double> numeric(values.size());
    const auto loss_at = [&](std::size_t i, double x) {
      values[i] = x;
      return loss(in);
    };
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double saved = values[i];
      numeric[i] = (loss_at(i, saved - 2 * h) - 8 * loss_at(i, saved - h) + 8 * loss_at(i, saved + h) -
                    loss_at(i, saved + 2 * h)) /
                   (12 * h);
      values[i] = saved;
    }
    ASSERT_GT(testing::rms(numeric), 1e-6);
    EXPECT_TRUE(close_by_rmse_ratio(name, numeric, analytic, 1e-6, 0.0));
  };
  check("dq", &KdaHostInputs::q, grads.dq);
  check("dk", &KdaHostInputs::k, grads.dk);
  check("dv", &KdaHostInputs::v, grads.dv);
  check("dg", &KdaHostInputs::g, grads.dg);
  check("dbeta", &KdaHostInputs::beta, grads.dbeta);
  if (!p.gate_is_log_decay) {
    check("da_log", &KdaHostInputs::a_log, grads.da_log);
    check("ddt_bias", &KdaHostInputs::dt_bias, grads.ddt_bias);
  }
  check("d_initial_state", &KdaHostInputs::initial_state, grads.d_initial_state);
}

TEST(KdaReference, BackwardMatchesFiniteDifferencesVarlen) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"fd_varlen", {0, 3, 7}, 2, 3, 2};
  expect_gradient_matches_fd(make_problem(c), make_inputs(c, rng), rng);
}

TEST(KdaReference, BackwardMatchesFiniteDifferencesAcrossCheckpoints) {
  // 70 tokens cross the reference's 64-token recompute window.
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"fd_long", fixed_length_offsets(1, 70), 1, 2, 2};
  expect_gradient_matches_fd(make_problem(c), make_inputs(c, rng), rng);
}

TEST(KdaReference, BackwardMatchesFiniteDifferencesWithoutNormOrSigmoid) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"fd_plain", {0, 4, 9}, 1, 3, 3, true, false, false};
  expect_gradient_matches_fd(make_problem(c), make_inputs(c, rng), rng);
}

TEST(KdaReference, BackwardMatchesFiniteDifferencesLogDecayGate) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"fd_log_decay", {0, 5, 11}, 2, 3, 2, true, true, true, GateRegime::kTypical,
                  -5.0, true};
  expect_gradient_matches_fd(make_problem(c), make_inputs(c, rng), rng);
}

}  // namespace
}  // namespace k3lab::kernels
