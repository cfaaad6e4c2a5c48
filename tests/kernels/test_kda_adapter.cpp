// The KDA kernel adapter (models::kda_chunkwise_kernel) on CPU tensors (label unit): the kernel
// form's preprocessing in LibTorch followed by models::kda_chunkwise, against the double reference
// (forward for every chunk size, LibTorch-autograd gradients of every input), its sensitivity to
// every token, dispatch and registration, and argument validation shared with the kernels.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>

#include <k3lab/models/kda.hpp>
#include <k3lab/models/kda_kernel.hpp>
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/kernel_registration.hpp>

#include "k3lab/kernels/kda.hpp"
#include "k3lab/kernels/kda_reference.hpp"
#include "k3lab/kernels/torch_ops.hpp"
#include "kernel_test_support.hpp"
#include "torch_test_support.hpp"

namespace k3lab::kernels {
namespace {

using models::kda_chunkwise_kernel;
using models::KdaChunkwiseArgs;
using models::KdaResult;
using testing::GateRegime;
using testing::KdaCase;
using testing::tensor_of;
using testing::values_of;

// The host inputs of a case as the adapter's float64 leaf tensors (B = 1 and cu_seqlens when
// varlen, otherwise a batch of equally long sequences).
KdaChunkwiseArgs kernel_form(const KdaCase& c, const KdaHostInputs& in, bool varlen,
                             std::int64_t chunk_size = 64) {
  const std::int64_t N = static_cast<std::int64_t>(c.cu_seqlens.size()) - 1;
  const std::int64_t H = c.heads, K = c.key_dim, V = c.value_dim;
  const std::int64_t B = varlen ? 1 : N;
  const std::int64_t T = varlen ? c.cu_seqlens.back() : c.cu_seqlens[1];
  KdaChunkwiseArgs a;
  a.q = tensor_of(in.q, {B, T, H, K}).requires_grad_();
  a.k = tensor_of(in.k, {B, T, H, K}).requires_grad_();
  a.v = tensor_of(in.v, {B, T, H, V}).requires_grad_();
  a.g = tensor_of(in.g, {B, T, H, K}).requires_grad_();
  a.beta = tensor_of(in.beta, {B, T, H}).requires_grad_();
  if (!c.log_decay_gate) {
    a.a_log = tensor_of(in.a_log, {H}).requires_grad_();
    a.dt_bias = tensor_of(in.dt_bias, {H, K}).requires_grad_();
  }
  if (!in.initial_state.empty()) a.initial_state = tensor_of(in.initial_state, {N, H, K, V}).requires_grad_();
  if (varlen) a.cu_seqlens = torch::tensor(c.cu_seqlens, torch::kInt64);
  a.chunk_size = chunk_size;
  a.lower_bound = c.lower_bound;
  a.l2norm_qk = c.l2norm_qk;
  a.beta_is_logits = c.beta_is_logits;
  return a;
}

bool uniform_lengths(const KdaCase& c) {
  return c.cu_seqlens == fixed_length_offsets(static_cast<std::int64_t>(c.cu_seqlens.size()) - 1,
                                              c.cu_seqlens[1]);
}

TEST(KdaAdapter, ForwardAndAutogradMatchReferences) {
  testing::TestRng rng = testing::seeded_rng();
  const std::vector<KdaCase> cases = {
      {"fixed", fixed_length_offsets(2, 37), 2, 8, 12},
      {"varlen_with_empty", {0, 5, 21, 21, 50}, 2, 16, 8},
      {"near_bound_no_norm", fixed_length_offsets(1, 40), 1, 8, 8, false, false, false,
       GateRegime::kNearBound},
      {"log_decay_gate", {0, 20, 45}, 2, 8, 8, true, true, true, GateRegime::kTypical, -5.0, true},
  };
  for (const KdaCase& c : cases) {
    for (bool varlen : {true, false}) {
      if (!varlen && !uniform_lengths(c)) continue;
      SCOPED_TRACE(c.name + (varlen ? " (cu_seqlens)" : " (batch)"));
      const KdaHostProblem problem = testing::make_problem(c);
      const KdaHostInputs in = testing::make_inputs(c, rng);
      const KdaHostOutputs gold = kda_recurrent_reference(problem, in);
      const KdaChunkwiseArgs a = kernel_form(c, in, varlen);
      const KdaResult got = kda_chunkwise_kernel(a);
      K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-10);
      K3LAB_EXPECT_CLOSE("final_state", gold.final_state, values_of(got.final_state), 1e-10);

      const std::vector<double> d_out = testing::normals(rng, gold.out.size());
      const std::vector<double> d_final = testing::normals(rng, gold.final_state.size());
      const KdaHostGrads grads = kda_backward_reference(problem, in, d_out, d_final);
      const torch::Tensor loss = (got.output * tensor_of(d_out, got.output.sizes().vec())).sum() +
                                 (got.final_state * tensor_of(d_final, got.final_state.sizes().vec())).sum();
      loss.backward();
      K3LAB_EXPECT_CLOSE("dq", grads.dq, values_of(a.q.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dk", grads.dk, values_of(a.k.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dv", grads.dv, values_of(a.v.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dg", grads.dg, values_of(a.g.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dbeta", grads.dbeta, values_of(a.beta.grad()), 1e-9);
      if (!c.log_decay_gate) {
        K3LAB_EXPECT_CLOSE("da_log", grads.da_log, values_of(a.a_log.grad()), 1e-9);
        K3LAB_EXPECT_CLOSE("ddt_bias", grads.ddt_bias, values_of(a.dt_bias.grad()), 1e-9);
      }
      if (a.initial_state) {
        K3LAB_EXPECT_CLOSE("d_initial_state", grads.d_initial_state,
                           values_of(a.initial_state->grad()), 1e-9);
      }
    }
  }
}

TEST(KdaAdapter, ChunkwiseMatchesRecurrenceForEveryChunkSize) {
  testing::TestRng rng = testing::seeded_rng();
  const std::vector<KdaCase> cases = {
      {"fixed_not_tile_multiple", fixed_length_offsets(2, 37), 2, 8, 12},
      {"varlen_with_empty", {0, 5, 21, 21, 50}, 2, 16, 8},
      {"no_initial_state", fixed_length_offsets(1, 40), 1, 8, 8, false},
      {"no_l2norm_no_sigmoid", fixed_length_offsets(2, 33), 2, 8, 8, true, false, false},
      {"gate_near_bound", fixed_length_offsets(1, 70), 2, 8, 8, true, true, true,
       GateRegime::kNearBound},
      {"shallow_bound", {0, 17, 50}, 1, 12, 4, true, true, true, GateRegime::kTypical, -0.5},
      {"log_decay_gate", {0, 20, 45}, 2, 8, 8, true, true, true, GateRegime::kNearBound, -5.0,
       true},
  };
  for (const KdaCase& c : cases) {
    SCOPED_TRACE(c.name);
    const KdaHostProblem p = testing::make_problem(c);
    const KdaHostInputs in = testing::make_inputs(c, rng);
    const KdaHostOutputs gold = kda_recurrent_reference(p, in);
    ASSERT_GT(testing::rms(gold.out), 1e-3);
    // 16 is the kernels' tile; 64 (the models' default, fine in double even at the bound) and 5
    // exercise the boundaries.
    for (std::int64_t chunk : {16, 64, 5}) {
      SCOPED_TRACE(chunk);
      const KdaResult got = kda_chunkwise_kernel(kernel_form(c, in, true, chunk));
      K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-10);
      K3LAB_EXPECT_CLOSE("final_state", gold.final_state, values_of(got.final_state), 1e-10);
    }
  }
}

TEST(KdaAdapter, ChunkwiseIsSensitiveToEveryToken) {
  // A chunkwise form that dropped a tile's last row or the inter-tile decay would still match on
  // some inputs; perturbing the last token of a tile must move the next tile's first output
  // (further on, the decay of up to 5 nats per token makes the influence vanish).
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"sensitivity", fixed_length_offsets(1, 40), 1, 8, 8};
  const KdaHostProblem p = testing::make_problem(c);
  KdaHostInputs in = testing::make_inputs(c, rng);
  const std::vector<double> before = values_of(kda_chunkwise_kernel(kernel_form(c, in, false, 16)).output);
  in.v[15 * 8] += 1.0;  // token 15, the last row of the first tile
  const std::vector<double> after = values_of(kda_chunkwise_kernel(kernel_form(c, in, false, 16)).output);
  const KdaHostOutputs gold = kda_recurrent_reference(p, in);
  EXPECT_GT(std::abs(after[16 * 8] - before[16 * 8]), 1e-9);
  K3LAB_EXPECT_CLOSE("out", gold.out, after, 1e-10);
}

TEST(KdaAdapter, CpuTensorsRunTheModelsChunkwiseForm) {
  // What the seam passes (log decay, normalised q and k, beta given): exactly kda_chunkwise.
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"dispatch", fixed_length_offsets(2, 19), 2, 16, 16, true, false, false,
                  GateRegime::kTypical, -5.0, true};
  KdaChunkwiseArgs a = kernel_form(c, testing::make_inputs(c, rng), false, 16);
  const KdaResult got = kda_chunkwise_kernel(a);
  const KdaResult want = models::kda_chunkwise(a.q, a.k, a.v, a.g, a.beta, a.initial_state, 16);
  EXPECT_TRUE(torch::equal(got.output, want.output));
  EXPECT_TRUE(torch::equal(got.final_state, want.final_state));
  EXPECT_EQ(got.final_state.scalar_type(), torch::kFloat64);
  EXPECT_EQ(models::register_cuda_kernels(), torch_cuda_path_available());
  EXPECT_EQ(models::has_kda_chunkwise_impl(c10::DeviceType::CUDA), torch_cuda_path_available());
  EXPECT_FALSE(models::has_kda_chunkwise_impl(c10::DeviceType::CPU));
}

TEST(KdaAdapter, Float32InputsKeepTheirDtype) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"float32", fixed_length_offsets(2, 21), 2, 16, 16};
  const KdaHostInputs in = testing::make_inputs(c, rng);
  KdaChunkwiseArgs a = kernel_form(c, in, false);
  for (torch::Tensor* x : {&a.q, &a.k, &a.v, &a.g, &a.beta}) *x = x->detach().to(torch::kFloat32);
  const KdaResult got = kda_chunkwise_kernel(a);
  EXPECT_EQ(got.output.scalar_type(), torch::kFloat32);
  EXPECT_EQ(got.final_state.scalar_type(), torch::kFloat32);
  const KdaHostOutputs gold = kda_recurrent_reference(testing::make_problem(c), in);
  K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-4);
}

TEST(KdaAdapter, LogDecayBelowTheBoundStillRuns) {
  // The kernels would need the gate at or above lower_bound; the LibTorch path (which CUDA calls
  // with such a gate also take) computes it exactly.
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"steep", {0, 20, 45}, 2, 8, 8, true, true, true, GateRegime::kTypical, -5.0, true};
  KdaHostInputs in = testing::make_inputs(c, rng);
  for (double& g : in.g) g -= 2.0;  // log decays in (-7, -2)
  const KdaHostOutputs gold = kda_recurrent_reference(testing::make_problem(c), in);
  const KdaResult got = kda_chunkwise_kernel(kernel_form(c, in, true));
  K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-10);
  K3LAB_EXPECT_CLOSE("final_state", gold.final_state, values_of(got.final_state), 1e-10);
}

TEST(KdaAdapter, RejectsBadInputs) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"bad", fixed_length_offsets(1, 8), 1, 16, 16};
  const KdaChunkwiseArgs good = kernel_form(c, testing::make_inputs(c, rng), false);
  EXPECT_NO_THROW(kda_chunkwise_kernel(good));
  const auto rejects = [&](const char* what, const std::function<void(KdaChunkwiseArgs&)>& change) {
    SCOPED_TRACE(what);
    KdaChunkwiseArgs wrong = good;
    change(wrong);
    EXPECT_THROW(kda_chunkwise_kernel(wrong), std::invalid_argument);
  };
  rejects("v", [](KdaChunkwiseArgs& a) { a.v = a.v.narrow(3, 0, 8).narrow(1, 0, 4); });
  rejects("dt_bias alone", [](KdaChunkwiseArgs& a) { a.dt_bias = torch::Tensor(); });
  rejects("a_log shape", [](KdaChunkwiseArgs& a) { a.a_log = torch::zeros({2}, torch::kFloat64); });
  rejects("cu_seqlens end", [](KdaChunkwiseArgs& a) {
    a.cu_seqlens = torch::tensor(std::vector<std::int64_t>{0, 9}, torch::kInt64);
  });
  rejects("cu_seqlens order", [](KdaChunkwiseArgs& a) {
    a.cu_seqlens = torch::tensor(std::vector<std::int64_t>{0, 5, 3, 8}, torch::kInt64);
  });
  rejects("cu_seqlens dtype", [](KdaChunkwiseArgs& a) {
    a.cu_seqlens = torch::tensor(std::vector<std::int32_t>{0, 8}, torch::kInt32);
  });
  rejects("initial_state", [](KdaChunkwiseArgs& a) {
    a.initial_state = torch::zeros({2, 1, 16, 16}, torch::kFloat64);
  });
  rejects("chunk_size", [](KdaChunkwiseArgs& a) { a.chunk_size = 24; });
}

// The kernels' message for options they refuse, or "" when they take them.
std::string kernel_verdict(const KdaOptions& options) {
  try {
    kda_validate_options(options);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

std::string adapter_verdict(const KdaChunkwiseArgs& args) {
  try {
    kda_chunkwise_kernel(args);
    return "";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(KdaAdapter, ValidatesOptionsExactlyAsTheKernels) {
  // A lower bound below -5 breaks the 16-token factorisation (non-finite float32 outputs in the
  // LibTorch path this adapter replaced): the adapter refuses exactly what kda_validate refuses,
  // with the same message, on CPU tensors too.
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"options", fixed_length_offsets(1, 20), 1, 16, 16};
  const KdaChunkwiseArgs base = kernel_form(c, testing::make_inputs(c, rng), false);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (double bound : {-6.0, -5.01, 0.0, 0.25, nan, -inf, -5.0, -3.0, -0.5}) {
    SCOPED_TRACE("lower_bound " + std::to_string(bound));
    KdaChunkwiseArgs args = base;
    args.lower_bound = bound;
    KdaOptions options;
    options.lower_bound = static_cast<float>(bound);
    const std::string want = kernel_verdict(options);
    EXPECT_EQ(want.empty(), bound >= -5.0 && bound < 0.0);
    EXPECT_EQ(adapter_verdict(args), want);
  }
  for (double scale : {-1.0, nan, inf, 0.0, 0.3}) {
    SCOPED_TRACE("scale " + std::to_string(scale));
    KdaChunkwiseArgs args = base;
    args.scale = scale;
    KdaOptions options;
    options.scale = static_cast<float>(scale);
    const std::string want = kernel_verdict(options);
    EXPECT_EQ(want.empty(), scale >= 0.0 && std::isfinite(scale));
    EXPECT_EQ(adapter_verdict(args), want);
  }
}

TEST(KdaAdapter, Float32AtTheLowestBoundStaysFiniteAndAccurate) {
  // lower_bound = -5 with every gate near it: the hardest gate the adapter accepts, in float32.
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"bound_f32", fixed_length_offsets(1, 80), 2, 16, 16, true, true, true,
                  GateRegime::kNearBound};
  const KdaHostInputs in = testing::make_inputs(c, rng);
  KdaChunkwiseArgs a = kernel_form(c, in, false);
  for (torch::Tensor* x : {&a.q, &a.k, &a.v, &a.g, &a.beta}) *x = x->detach().to(torch::kFloat32);
  const KdaResult got = kda_chunkwise_kernel(a);
  const KdaHostOutputs gold = kda_recurrent_reference(testing::make_problem(c), in);
  K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 0.005);
  K3LAB_EXPECT_CLOSE("final_state", gold.final_state, values_of(got.final_state), 0.005);
}

}  // namespace
}  // namespace k3lab::kernels
