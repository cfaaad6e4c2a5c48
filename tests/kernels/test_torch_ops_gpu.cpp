// The kernel adapters' CUDA path (label gpu; built only against a CUDA LibTorch, skipped without
// a device): outputs and autograd gradients of the KDA kernels against LibTorch autograd through
// the adapter's LibTorch path (models::kda_chunkwise), in float64 on the CPU, on the same
// bf16-rounded inputs; calls the kernels refuse; SiTU-GLU; then the model seams.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <k3lab/models/kda.hpp>
#include <k3lab/models/kda_kernel.hpp>
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/kernel_registration.hpp>
#include <k3lab/models/situ_glu_ops.hpp>

#include "k3lab/kernels/cuda_runtime.hpp"
#include "k3lab/kernels/torch_ops.hpp"
#include "kernel_test_support.hpp"
#include "torch_test_support.hpp"

namespace k3lab::kernels {
namespace {

using models::kda_chunkwise_kernel;
using models::KdaChunkwiseArgs;
using models::KdaResult;
using testing::values_of;

class TorchOpsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!torch::cuda::is_available() || cuda_device_count() == 0) {
      GTEST_SKIP() << "no CUDA device for LibTorch: " << cuda_device_summary();
    }
    torch::manual_seed(static_cast<std::uint64_t>(testing::test_seed() & 0x7fffffffffffffffull));
  }
};

struct AdapterCase {
  const char* name;
  std::int64_t B, T, H, D;
  std::vector<std::int64_t> cu_seqlens;  // non-empty: varlen with B = 1
  bool log_decay_gate;
};

// Random inputs: bf16 q/k/v/g/beta and fp32 a_log/dt_bias/h0 on the GPU.
KdaChunkwiseArgs random_inputs(const AdapterCase& c) {
  const auto cuda = torch::TensorOptions().device(torch::kCUDA);
  const auto bf16 = cuda.dtype(torch::kBFloat16);
  const auto f32 = cuda.dtype(torch::kFloat32);
  const std::int64_t N = c.cu_seqlens.empty() ? c.B : static_cast<std::int64_t>(c.cu_seqlens.size()) - 1;
  KdaChunkwiseArgs in;
  in.l2norm_qk = true;
  in.beta_is_logits = true;
  in.q = torch::rand({c.B, c.T, c.H, c.D}, bf16);
  in.k = torch::rand({c.B, c.T, c.H, c.D}, bf16);
  in.v = torch::randn({c.B, c.T, c.H, c.D}, bf16);
  in.beta = torch::randn({c.B, c.T, c.H}, bf16);
  in.initial_state = torch::randn({N, c.H, c.D, c.D}, f32);
  const torch::Tensor a_log = torch::randn({c.H}, f32);
  const torch::Tensor dt_bias = torch::randn({c.H, c.D}, f32);
  const torch::Tensor g_raw = torch::randn({c.B, c.T, c.H, c.D}, bf16);
  if (c.log_decay_gate) {
    in.g = (-5.0 * torch::sigmoid(a_log.exp().view({1, 1, c.H, 1}) *
                                  (g_raw.to(torch::kFloat32) + dt_bias.view({1, 1, c.H, c.D}))));
  } else {
    in.g = g_raw;
    in.a_log = a_log;
    in.dt_bias = dt_bias;
  }
  if (!c.cu_seqlens.empty()) in.cu_seqlens = torch::tensor(c.cu_seqlens, cuda.dtype(torch::kInt64));
  return in;
}

std::vector<torch::Tensor*> leaves(KdaChunkwiseArgs& in) {
  std::vector<torch::Tensor*> out = {&in.q, &in.k, &in.v, &in.g, &in.beta, &*in.initial_state};
  if (in.a_log.defined()) {
    out.push_back(&in.a_log);
    out.push_back(&in.dt_bias);
  }
  return out;
}

TEST_F(TorchOpsGpu, KdaAutogradMatchesLibTorchPath) {
  const AdapterCase cases[] = {
      {"fixed", 2, 300, 4, 128, {}, false},
      {"varlen", 1, 2000, 4, 128, {0, 15, 100, 300, 1200, 2000}, false},
      {"log_decay_gate", 2, 257, 2, 64, {}, true},
  };
  for (const AdapterCase& c : cases) {
    for (KdaMath math : {KdaMath::kTensorCoreTf32, KdaMath::kFp32Scalar}) {
      SCOPED_TRACE(std::string(c.name) + (math == KdaMath::kFp32Scalar ? " fp32" : " tf32"));
      std::cout << "[ case     ] " << c.name << "\n";
      KdaChunkwiseArgs gpu = random_inputs(c);
      KdaChunkwiseArgs cpu = gpu;
      for (torch::Tensor* t : leaves(gpu)) *t = t->detach().requires_grad_();
      for (torch::Tensor* t : leaves(cpu)) *t = t->detach().cpu().to(torch::kFloat64).requires_grad_();
      if (cpu.cu_seqlens.defined()) cpu.cu_seqlens = cpu.cu_seqlens.cpu();
      if (c.log_decay_gate) {
        gpu.beta_is_logits = cpu.beta_is_logits = false;
        gpu.beta = torch::sigmoid(gpu.beta.detach()).requires_grad_();
        cpu.beta = gpu.beta.detach().cpu().to(torch::kFloat64).requires_grad_();
      }

      const KdaResult got = kda_chunkwise_kernel(gpu, math);
      const KdaResult want = kda_chunkwise_kernel(cpu);
      K3LAB_EXPECT_CLOSE("out", values_of(want.output), values_of(got.output), 0.005);
      K3LAB_EXPECT_CLOSE("final_state", values_of(want.final_state), values_of(got.final_state), 0.005);

      // Upstream gradients representable in bf16, so both sides see the same ones.
      const torch::Tensor d_out = torch::randn(want.output.sizes()).to(torch::kBFloat16).to(torch::kFloat64);
      const torch::Tensor d_final = torch::randn(want.final_state.sizes(), torch::kFloat64);
      ((want.output * d_out).sum() + (want.final_state * d_final).sum()).backward();
      ((got.output * d_out.to(got.output.options())).sum() +
       (got.final_state * d_final.to(got.final_state.options())).sum())
          .backward();
      K3LAB_EXPECT_CLOSE("dq", values_of(cpu.q.grad()), values_of(gpu.q.grad()), 0.008);
      K3LAB_EXPECT_CLOSE("dk", values_of(cpu.k.grad()), values_of(gpu.k.grad()), 0.008);
      K3LAB_EXPECT_CLOSE("dv", values_of(cpu.v.grad()), values_of(gpu.v.grad()), 0.008);
      K3LAB_EXPECT_CLOSE("dg", values_of(cpu.g.grad()), values_of(gpu.g.grad()), 0.02);
      K3LAB_EXPECT_CLOSE("dbeta", values_of(cpu.beta.grad()), values_of(gpu.beta.grad()), 0.02);
      K3LAB_EXPECT_CLOSE("d_initial_state", values_of(cpu.initial_state->grad()),
                         values_of(gpu.initial_state->grad()), 0.008);
      if (!c.log_decay_gate) {
        // Relative to the size of the summed terms (see gate_param_scales).
        const torch::Tensor dx = cpu.g.grad();  // (B, T, H, K)
        const torch::Tensor shifted = cpu.g.detach() + cpu.dt_bias.detach().view({1, 1, c.H, c.D});
        const std::vector<double> a_scale = values_of((dx * shifted).pow(2).sum(std::vector<std::int64_t>{0, 1, 3}).sqrt());
        const std::vector<double> b_scale = values_of(dx.pow(2).sum(std::vector<std::int64_t>{0, 1}).sqrt());
        K3LAB_EXPECT_CLOSE_TO_SCALE("da_log", values_of(cpu.a_log.grad()), values_of(gpu.a_log.grad()),
                                    a_scale, 0.008);
        K3LAB_EXPECT_CLOSE_TO_SCALE("ddt_bias", values_of(cpu.dt_bias.grad()),
                                    values_of(gpu.dt_bias.grad()), b_scale, 0.008);
      }
    }
  }
}

TEST_F(TorchOpsGpu, SituGluAutogradMatchesLibTorchPath) {
  const auto bf16 = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16);
  // The halves of a fused projection (strided rows) and a packed pair.
  const torch::Tensor fused = (torch::randn({64, 33, 2 * 384}, bf16) * 8).requires_grad_();
  const std::vector<torch::Tensor> halves = fused.chunk(2, -1);
  const torch::Tensor packed_up = (torch::randn({64, 33, 384}, bf16) * 30).requires_grad_();
  for (int layout = 0; layout < 2; ++layout) {
    const torch::Tensor gate = halves[0];
    const torch::Tensor up = layout == 0 ? halves[1] : packed_up;
    const torch::Tensor gate64 = gate.detach().cpu().to(torch::kFloat64).requires_grad_();
    const torch::Tensor up64 = up.detach().cpu().to(torch::kFloat64).requires_grad_();
    const torch::Tensor got = situ_glu_cuda(gate, up);
    const torch::Tensor want = situ_glu_torch(gate64, up64);
    K3LAB_EXPECT_CLOSE("out", values_of(want), values_of(got), 0.005);
    const torch::Tensor d_out = torch::randn(want.sizes()).to(torch::kBFloat16).to(torch::kFloat64);
    (want * d_out).sum().backward();
    const std::vector<torch::Tensor> grads =
        torch::autograd::grad({(got * d_out.to(got.options())).sum()}, {gate, up});
    K3LAB_EXPECT_CLOSE("d_gate", values_of(gate64.grad()), values_of(grads[0]), 0.008);
    K3LAB_EXPECT_CLOSE("d_up", values_of(up64.grad()), values_of(grads[1]), 0.008);
  }
}

TEST_F(TorchOpsGpu, KdaCallsTheKernelsRefuseMatchTheLibTorchPath) {
  // A log decay below the bound and a head dim the kernels lack: the adapter keeps LibTorch on the
  // GPU, so the results equal those of the CPU up to float32 rounding.
  const auto f32 = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
  const std::int64_t B = 2, T = 70, H = 2;
  for (const std::int64_t K : {64, 24}) {
    SCOPED_TRACE(K);
    KdaChunkwiseArgs gpu;
    gpu.q = models::l2_normalize(torch::randn({B, T, H, K}, f32));
    gpu.k = models::l2_normalize(torch::randn({B, T, H, K}, f32));
    gpu.v = torch::randn({B, T, H, K}, f32);
    const double lowest = K == 64 ? -7.0 : -5.0;  // K = 64 alone would run the kernels
    gpu.g = lowest * torch::sigmoid(torch::randn({B, T, H, K}, f32));
    gpu.beta = torch::sigmoid(torch::randn({B, T, H}, f32));
    KdaChunkwiseArgs cpu = gpu;
    for (torch::Tensor* t : {&cpu.q, &cpu.k, &cpu.v, &cpu.g, &cpu.beta}) *t = t->cpu().to(torch::kFloat64);
    const KdaResult got = kda_chunkwise_kernel(gpu);
    const KdaResult want = kda_chunkwise_kernel(cpu);
    K3LAB_EXPECT_CLOSE("out", values_of(want.output), values_of(got.output), 1e-5);
    K3LAB_EXPECT_CLOSE("final_state", values_of(want.final_state), values_of(got.final_state), 1e-5);
  }
}

TEST_F(TorchOpsGpu, ModelSeamsUseTheKernels) {
  ASSERT_TRUE(models::register_cuda_kernels());
  ASSERT_TRUE(models::has_kda_chunkwise_impl(c10::DeviceType::CUDA));
  const auto f32 = torch::TensorOptions().device(torch::kCUDA).dtype(torch::kFloat32);
  const std::int64_t B = 2, T = 200, H = 2, K = 64;
  // What the model layer passes: normalised q/k, the bounded log decay, beta in (0, 1).
  const torch::Tensor q = models::l2_normalize(torch::randn({B, T, H, K}, f32)).requires_grad_();
  const torch::Tensor k = models::l2_normalize(torch::randn({B, T, H, K}, f32)).requires_grad_();
  const torch::Tensor v = torch::randn({B, T, H, K}, f32).requires_grad_();
  const torch::Tensor g = (-5.0 * torch::sigmoid(torch::randn({B, T, H, K}, f32))).requires_grad_();
  const torch::Tensor beta = torch::sigmoid(torch::randn({B, T, H}, f32)).requires_grad_();
  const models::KdaResult got = models::kda_chunkwise_op(q, k, v, g, beta);
  const models::KdaResult want = models::kda_chunkwise(q, k, v, g, beta);
  // fp32 inputs go through the bf16 kernels: bf16 input rounding (~0.2%) on top of fla's 0.005.
  K3LAB_EXPECT_CLOSE("seam out", values_of(want.output), values_of(got.output), 0.01);
  const std::vector<torch::Tensor> got_grads = torch::autograd::grad({got.output.sum()}, {q, k, v, g, beta});
  const std::vector<torch::Tensor> want_grads = torch::autograd::grad({want.output.sum()}, {q, k, v, g, beta});
  const char* names[] = {"seam dq", "seam dk", "seam dv", "seam dg", "seam dbeta"};
  for (int i = 0; i < 5; ++i) {
    K3LAB_EXPECT_CLOSE(names[i], values_of(want_grads[i]), values_of(got_grads[i]), 0.02);
  }
  const torch::Tensor gate = torch::randn({16, 96}, f32) * 6, up = torch::randn({16, 96}, f32) * 30;
  K3LAB_EXPECT_CLOSE("seam situ", values_of(situ_glu_torch(gate, up)),
                     values_of(models::situ_glu_op(gate, up)), 1e-5);
}

}  // namespace
}  // namespace k3lab::kernels
