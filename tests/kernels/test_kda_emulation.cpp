// The KDA kernel bodies run in the host emulator (label unit): the same code the GPU runs, one
// simulated thread after another between barriers, checked against the double-precision
// recurrence and its adjoint. Outputs are NaN-poisoned before each run; a second run with the
// thread order reversed must give identical bits (a difference would be a race on the GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "k3lab/kernels/kda.hpp"
#include "k3lab/kernels/kda_reference.hpp"
#include "kda_test_harness.hpp"

namespace k3lab::kernels {
namespace {

using testing::close_by_rmse_ratio;
using testing::KdaCase;
using testing::KdaPacked;

struct ForwardResult {
  std::vector<Bf16> out;
  std::vector<float> final_state;
};

ForwardResult run_forward(const KdaPacked& p, const KdaOptions& options, bool reverse) {
  ForwardResult r;
  r.out.assign(p.q.size() / p.shape.key_dim * p.shape.value_dim, testing::bf16_nan());
  r.final_state.assign(p.shape.num_seqs * p.shape.heads * p.shape.key_dim * p.shape.value_dim,
                       testing::float_nan());
  KdaForwardArgs args;
  args.q = p.q.data();
  args.k = p.k.data();
  args.v = p.v.data();
  args.g = p.g.empty() ? nullptr : p.g.data();
  args.beta = p.beta.data();
  args.a_log = p.a_log.empty() ? nullptr : p.a_log.data();
  args.dt_bias = p.dt_bias.empty() ? nullptr : p.dt_bias.data();
  args.g_log_decay = p.g_log_decay.empty() ? nullptr : p.g_log_decay.data();
  args.initial_state = p.initial_state.empty() ? nullptr : p.initial_state.data();
  args.cu_seqlens = p.varlen ? p.cu_seqlens.data() : nullptr;
  args.out = r.out.data();
  args.final_state = r.final_state.data();
  kda_forward_emulated(p.shape, options, args, {reverse});
  return r;
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};

struct BackwardResult {
  std::vector<Bf16> dq, dk, dv, dg, dbeta;
  std::vector<float> da_log, ddt_bias, d_initial_state, dg_log_decay;
};

BackwardResult run_backward(const KdaPacked& p, const KdaOptions& options,
                            const std::vector<Bf16>& d_out, const std::vector<float>& d_final,
                            bool reverse) {
  const KdaShape& s = p.shape;
  BackwardResult r;
  r.dq.assign(p.q.size(), testing::bf16_nan());
  r.dk.assign(p.k.size(), testing::bf16_nan());
  r.dv.assign(p.v.size(), testing::bf16_nan());
  r.dg.assign(p.g.size(), testing::bf16_nan());
  r.dg_log_decay.assign(p.g_log_decay.size(), testing::float_nan());
  r.dbeta.assign(p.beta.size(), testing::bf16_nan());
  r.da_log.assign(s.heads, testing::float_nan());
  r.ddt_bias.assign(s.heads * s.key_dim, testing::float_nan());
  r.d_initial_state.assign(s.num_seqs * s.heads * s.key_dim * s.value_dim, testing::float_nan());
  const std::size_t bytes = (kda_backward_workspace_bytes(s) + 255) / 256 * 256;
  std::unique_ptr<void, AlignedFree> workspace(std::aligned_alloc(256, bytes));
  std::memset(workspace.get(), 0xff, bytes);  // NaN everywhere: nothing may read stale workspace
  KdaBackwardArgs args;
  args.forward.q = p.q.data();
  args.forward.k = p.k.data();
  args.forward.v = p.v.data();
  args.forward.g = p.g.empty() ? nullptr : p.g.data();
  args.forward.beta = p.beta.data();
  args.forward.a_log = p.a_log.empty() ? nullptr : p.a_log.data();
  args.forward.dt_bias = p.dt_bias.empty() ? nullptr : p.dt_bias.data();
  args.forward.g_log_decay = p.g_log_decay.empty() ? nullptr : p.g_log_decay.data();
  args.forward.initial_state = p.initial_state.empty() ? nullptr : p.initial_state.data();
  args.forward.cu_seqlens = p.varlen ? p.cu_seqlens.data() : nullptr;
  args.d_out = d_out.data();
  args.d_final_state = d_final.empty() ? nullptr : d_final.data();
  args.dq = r.dq.data();
  args.dk = r.dk.data();
  args.dv = r.dv.data();
  args.dg = r.dg.empty() ? nullptr : r.dg.data();
  args.dg_log_decay = r.dg_log_decay.empty() ? nullptr : r.dg_log_decay.data();
  args.dbeta = r.dbeta.data();
  args.da_log = r.da_log.data();
  args.ddt_bias = r.ddt_bias.data();
  args.d_initial_state = r.d_initial_state.data();
  args.workspace = workspace.get();
  kda_backward_emulated(s, options, args, {reverse});
  return r;
}

bool same_bits(const void* a, const void* b, std::size_t bytes) { return std::memcmp(a, b, bytes) == 0; }

class KdaEmulation : public ::testing::TestWithParam<KdaMath> {};

TEST_P(KdaEmulation, ForwardMatchesRecurrence) {
  testing::TestRng rng = testing::seeded_rng();
  for (const KdaCase& c : testing::kernel_cases(true)) {
    for (bool as_batch : {true, false}) {
      SCOPED_TRACE(c.name + (as_batch ? " (batch)" : " (cu_seqlens)"));
      const KdaHostInputs in = testing::make_inputs(c, rng);
      const KdaHostOutputs gold = kda_recurrent_reference(testing::make_problem(c), in);
      ASSERT_GT(testing::rms(gold.out), 1e-3);
      const KdaPacked packed = testing::pack_inputs(c, in, as_batch);
      const ForwardResult got = run_forward(packed, testing::options_for(c, GetParam()), false);
      K3LAB_EXPECT_CLOSE("out", gold.out, testing::to_double(got.out), 0.005);
      // fp32 state: with fp32 products far tighter than fla's 0.005.
      K3LAB_EXPECT_CLOSE("final_state", gold.final_state, testing::to_double(got.final_state),
                         GetParam() == KdaMath::kFp32Scalar ? 1e-4 : 0.005);
      const ForwardResult reversed = run_forward(packed, testing::options_for(c, GetParam()), true);
      EXPECT_TRUE(same_bits(got.out.data(), reversed.out.data(), got.out.size() * sizeof(Bf16)));
      EXPECT_TRUE(same_bits(got.final_state.data(), reversed.final_state.data(),
                            got.final_state.size() * sizeof(float)));
    }
  }
}

TEST_P(KdaEmulation, BackwardMatchesAdjoint) {
  testing::TestRng rng = testing::seeded_rng();
  for (const KdaCase& c : testing::kernel_cases(true)) {
    SCOPED_TRACE(c.name);
    const KdaHostProblem problem = testing::make_problem(c);
    const KdaHostInputs in = testing::make_inputs(c, rng);
    const KdaPacked packed = testing::pack_inputs(c, in, true);
    std::vector<double> d_out = testing::normals(rng, in.v.size());
    testing::round_to_bf16_in_place(d_out);
    // Cases without an initial state also go without a final-state gradient (dS starts at 0).
    std::vector<double> d_final;
    if (c.initial_state) d_final = testing::normals(rng, packed.shape.num_seqs * c.heads * c.key_dim * c.value_dim);
    for (auto& v : d_final) v = static_cast<float>(v);
    const KdaHostGrads gold = kda_backward_reference(problem, in, d_out, d_final);
    const BackwardResult got = run_backward(packed, testing::options_for(c, GetParam()), testing::to_bf16(d_out),
                                            testing::to_float(d_final), false);
    K3LAB_EXPECT_CLOSE("dq", gold.dq, testing::to_double(got.dq), 0.008);
    K3LAB_EXPECT_CLOSE("dk", gold.dk, testing::to_double(got.dk), 0.008);
    K3LAB_EXPECT_CLOSE("dv", gold.dv, testing::to_double(got.dv), 0.008);
    if (c.log_decay_gate) {
      K3LAB_EXPECT_CLOSE("dg_log_decay", gold.dg, testing::to_double(got.dg_log_decay), 0.02);
      EXPECT_TRUE(std::all_of(got.da_log.begin(), got.da_log.end(), [](float x) { return std::isnan(x); }))
          << "a log-decay gate has no A_log: the output must stay untouched";
    } else {
      K3LAB_EXPECT_CLOSE("dg", gold.dg, testing::to_double(got.dg), 0.02);
    }
    K3LAB_EXPECT_CLOSE("dbeta", gold.dbeta, testing::to_double(got.dbeta), 0.02);
    if (!c.log_decay_gate) {
      const testing::GateParamScales scales = testing::gate_param_scales(problem, in, gold);
      K3LAB_EXPECT_CLOSE_TO_SCALE("da_log", gold.da_log, testing::to_double(got.da_log),
                                  scales.da_log, 0.008);
      K3LAB_EXPECT_CLOSE_TO_SCALE("ddt_bias", gold.ddt_bias, testing::to_double(got.ddt_bias),
                                  scales.ddt_bias, 0.008);
    }
    K3LAB_EXPECT_CLOSE("d_initial_state", gold.d_initial_state,
                                    testing::to_double(got.d_initial_state), 0.008);
    const BackwardResult reversed = run_backward(packed, testing::options_for(c, GetParam()),
                                                 testing::to_bf16(d_out), testing::to_float(d_final), true);
    EXPECT_TRUE(same_bits(got.dq.data(), reversed.dq.data(), got.dq.size() * sizeof(Bf16)));
    EXPECT_TRUE(same_bits(got.dg.data(), reversed.dg.data(), got.dg.size() * sizeof(Bf16)));
    EXPECT_TRUE(same_bits(got.dg_log_decay.data(), reversed.dg_log_decay.data(),
                          got.dg_log_decay.size() * sizeof(float)));
    EXPECT_TRUE(same_bits(got.d_initial_state.data(), reversed.d_initial_state.data(),
                          got.d_initial_state.size() * sizeof(float)));
  }
}

TEST_P(KdaEmulation, EmptySequencesPassTheStateThrough) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"empty", {0, 0, 0}, 2, 16, 32};
  const KdaPacked packed = testing::pack_inputs(c, testing::make_inputs(c, rng), false);
  const ForwardResult got = run_forward(packed, testing::options_for(c, GetParam()), false);
  EXPECT_EQ(got.final_state, packed.initial_state);
  const std::vector<float> d_final(packed.initial_state.size(), 0.5f);
  const BackwardResult grads = run_backward(packed, testing::options_for(c, GetParam()), {}, d_final, false);
  EXPECT_EQ(grads.d_initial_state, d_final);
  EXPECT_EQ(grads.da_log, std::vector<float>(2, 0.0f));
}

INSTANTIATE_TEST_SUITE_P(Math, KdaEmulation,
                         ::testing::Values(KdaMath::kFp32Scalar, KdaMath::kTensorCoreTf32),
                         [](const auto& info) {
                           return info.param == KdaMath::kFp32Scalar ? "fp32" : "tf32";
                         });

TEST(KdaEmulationArgs, RejectsBadArguments) {
  KdaShape shape{1, 16, 1, 48, 40, 1};
  KdaForwardArgs args;
  EXPECT_THROW(kda_validate(shape, KdaOptions{}), std::invalid_argument);  // value_dim 40
  shape.value_dim = 48;
  KdaOptions options;
  options.lower_bound = -6.0f;
  EXPECT_THROW(kda_validate(shape, options), std::invalid_argument);
  EXPECT_THROW(kda_forward_emulated(shape, KdaOptions{}, args), std::invalid_argument);  // null q
  EXPECT_NO_THROW(kda_validate({2, 16, 1, 48, 48, 2}, KdaOptions{}));
}

}  // namespace
}  // namespace k3lab::kernels
