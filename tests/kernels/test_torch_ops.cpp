// The LibTorch adapters on CPU (label unit): the LibTorch path against the C++ double references,
// forward and LibTorch-autograd gradients; dispatch of CPU tensors; SiTU-GLU; input errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "k3lab/kernels/kda_reference.hpp"
#include "k3lab/kernels/situ_glu_reference.hpp"
#include "k3lab/kernels/torch_ops.hpp"
#include "kernel_test_support.hpp"

namespace k3lab::kernels {
namespace {

using testing::GateRegime;
using testing::KdaCase;

torch::Tensor tensor_of(const std::vector<double>& values, std::vector<std::int64_t> shape) {
  return torch::tensor(values, torch::kFloat64).reshape(shape);
}

std::vector<double> values_of(const torch::Tensor& t) {
  const torch::Tensor c = t.to(torch::kFloat64).contiguous().cpu();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

struct TorchCase {
  KdaTorchInputs inputs;  // leaves with requires_grad
  KdaTorchOptions options;
};

// The host inputs of a case as float64 leaf tensors (B = 1 and cu_seqlens when varlen).
TorchCase torch_inputs(const KdaCase& c, const KdaHostInputs& in, bool varlen) {
  const std::int64_t N = static_cast<std::int64_t>(c.cu_seqlens.size()) - 1;
  const std::int64_t H = c.heads, K = c.key_dim, V = c.value_dim;
  const std::int64_t B = varlen ? 1 : N;
  const std::int64_t T = varlen ? c.cu_seqlens.back() : c.cu_seqlens[1];
  TorchCase t;
  t.inputs.q = tensor_of(in.q, {B, T, H, K}).requires_grad_();
  t.inputs.k = tensor_of(in.k, {B, T, H, K}).requires_grad_();
  t.inputs.v = tensor_of(in.v, {B, T, H, V}).requires_grad_();
  t.inputs.g = tensor_of(in.g, {B, T, H, K}).requires_grad_();
  t.inputs.beta = tensor_of(in.beta, {B, T, H}).requires_grad_();
  if (!c.log_decay_gate) {
    t.inputs.a_log = tensor_of(in.a_log, {H}).requires_grad_();
    t.inputs.dt_bias = tensor_of(in.dt_bias, {H, K}).requires_grad_();
  }
  if (!in.initial_state.empty()) {
    t.inputs.initial_state = tensor_of(in.initial_state, {N, H, K, V}).requires_grad_();
  }
  if (varlen) t.inputs.cu_seqlens = torch::tensor(c.cu_seqlens, torch::kInt64);
  t.options.lower_bound = c.lower_bound;
  t.options.l2norm_qk = c.l2norm_qk;
  t.options.beta_is_logits = c.beta_is_logits;
  return t;
}

std::vector<KdaCase> torch_cases() {
  return {
      {"fixed", fixed_length_offsets(2, 37), 2, 8, 12},
      {"varlen_with_empty", {0, 5, 21, 21, 50}, 2, 16, 8},
      {"near_bound_no_norm", fixed_length_offsets(1, 40), 1, 8, 8, false, false, false,
       GateRegime::kNearBound},
      {"log_decay_gate", {0, 20, 45}, 2, 8, 8, true, true, true, GateRegime::kTypical, -5.0, true},
  };
}

TEST(KdaTorchPath, ForwardAndAutogradMatchReferences) {
  testing::TestRng rng = testing::seeded_rng();
  for (const KdaCase& c : torch_cases()) {
    const bool uniform = c.cu_seqlens == fixed_length_offsets(c.cu_seqlens.size() - 1, c.cu_seqlens[1]);
    for (bool varlen : {true, false}) {
      if (!varlen && !uniform) continue;
      SCOPED_TRACE(c.name + (varlen ? " (cu_seqlens)" : " (batch)"));
      const KdaHostProblem problem = testing::make_problem(c);
      const KdaHostInputs in = testing::make_inputs(c, rng);
      const KdaHostOutputs gold = kda_recurrent_reference(problem, in);
      const TorchCase t = torch_inputs(c, in, varlen);
      const KdaTorchResult got = kda_chunkwise_torch(t.inputs, t.options);
      K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-10);
      K3LAB_EXPECT_CLOSE("final_state", gold.final_state, values_of(got.final_state), 1e-10);

      const std::vector<double> d_out = testing::normals(rng, gold.out.size());
      const std::vector<double> d_final = testing::normals(rng, gold.final_state.size());
      const KdaHostGrads grads = kda_backward_reference(problem, in, d_out, d_final);
      const torch::Tensor loss = (got.output * tensor_of(d_out, got.output.sizes().vec())).sum() +
                                 (got.final_state * tensor_of(d_final, got.final_state.sizes().vec())).sum();
      loss.backward();
      K3LAB_EXPECT_CLOSE("dq", grads.dq, values_of(t.inputs.q.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dk", grads.dk, values_of(t.inputs.k.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dv", grads.dv, values_of(t.inputs.v.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dg", grads.dg, values_of(t.inputs.g.grad()), 1e-9);
      K3LAB_EXPECT_CLOSE("dbeta", grads.dbeta, values_of(t.inputs.beta.grad()), 1e-9);
      if (!c.log_decay_gate) {
        K3LAB_EXPECT_CLOSE("da_log", grads.da_log, values_of(t.inputs.a_log.grad()), 1e-9);
        K3LAB_EXPECT_CLOSE("ddt_bias", grads.ddt_bias, values_of(t.inputs.dt_bias.grad()), 1e-9);
      }
      if (t.inputs.initial_state.defined()) {
        K3LAB_EXPECT_CLOSE("d_initial_state", grads.d_initial_state,
                           values_of(t.inputs.initial_state.grad()), 1e-9);
      }
    }
  }
}

TEST(KdaTorchPath, CpuTensorsTakeTheLibTorchPath) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"dispatch", fixed_length_offsets(1, 19), 1, 16, 16};
  const TorchCase t = torch_inputs(c, testing::make_inputs(c, rng), false);
  const KdaTorchResult a = kda_chunkwise_cuda(t.inputs, t.options);
  const KdaTorchResult b = kda_chunkwise_torch(t.inputs, t.options);
  EXPECT_TRUE(torch::equal(a.output, b.output));
  EXPECT_EQ(a.final_state.scalar_type(), torch::kFloat64);
  EXPECT_EQ(register_torch_kernels(), torch_cuda_path_available());
}

TEST(KdaTorchPath, Float32InputsKeepTheirDtype) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"float32", fixed_length_offsets(2, 21), 2, 16, 16};
  const KdaHostInputs in = testing::make_inputs(c, rng);
  TorchCase t = torch_inputs(c, in, false);
  for (torch::Tensor* x : {&t.inputs.q, &t.inputs.k, &t.inputs.v, &t.inputs.g, &t.inputs.beta}) {
    *x = x->detach().to(torch::kFloat32);
  }
  const KdaTorchResult got = kda_chunkwise_torch(t.inputs, t.options);
  EXPECT_EQ(got.output.scalar_type(), torch::kFloat32);
  const KdaHostOutputs gold = kda_recurrent_reference(testing::make_problem(c), in);
  K3LAB_EXPECT_CLOSE("out", gold.out, values_of(got.output), 1e-4);
}

TEST(KdaTorchPath, RejectsBadInputs) {
  testing::TestRng rng = testing::seeded_rng();
  const KdaCase c{"bad", fixed_length_offsets(1, 8), 1, 16, 16};
  TorchCase t = torch_inputs(c, testing::make_inputs(c, rng), false);
  KdaTorchInputs wrong = t.inputs;
  wrong.v = wrong.v.narrow(3, 0, 8).narrow(1, 0, 4);
  EXPECT_THROW(kda_chunkwise_torch(wrong, t.options), std::invalid_argument);
  wrong = t.inputs;
  wrong.dt_bias = torch::Tensor();
  EXPECT_THROW(kda_chunkwise_torch(wrong, t.options), std::invalid_argument);
  wrong = t.inputs;
  wrong.cu_seqlens = torch::tensor(std::vector<std::int64_t>{0, 9}, torch::kInt64);
  EXPECT_THROW(kda_chunkwise_torch(wrong, t.options), std::invalid_argument);
  wrong = t.inputs;
  wrong.a_log = torch::Tensor();
  wrong.dt_bias = torch::Tensor();
  wrong.g = torch::full_like(t.inputs.g, -6.0);  // a log decay below the bound
  EXPECT_THROW(kda_chunkwise_torch(wrong, t.options), std::invalid_argument);
}

TEST(SituGluTorchPath, ValueAndGradientsMatchReference) {
  testing::TestRng rng = testing::seeded_rng();
  const std::vector<double> gate = testing::normals(rng, 6 * 10, 0.0, 6.0);
  const std::vector<double> up = testing::normals(rng, 6 * 10, 0.0, 30.0);
  const std::vector<double> d_out = testing::normals(rng, 6 * 10);
  const torch::Tensor g = tensor_of(gate, {6, 10}).requires_grad_();
  const torch::Tensor u = tensor_of(up, {6, 10}).requires_grad_();
  const torch::Tensor out = situ_glu_cuda(g, u);  // CPU tensors: the LibTorch path
  K3LAB_EXPECT_CLOSE("out", situ_glu_forward_reference(gate, up), values_of(out), 1e-12);
  (out * tensor_of(d_out, {6, 10})).sum().backward();
  std::vector<double> d_gate, d_up;
  situ_glu_backward_reference(gate, up, d_out, d_gate, d_up);
  K3LAB_EXPECT_CLOSE("d_gate", d_gate, values_of(g.grad()), 1e-12);
  K3LAB_EXPECT_CLOSE("d_up", d_up, values_of(u.grad()), 1e-12);
  EXPECT_THROW(situ_glu_torch(g, u.narrow(1, 0, 5)), std::invalid_argument);
  EXPECT_THROW(situ_glu_torch(g, u, -1.0, 25.0), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::kernels
