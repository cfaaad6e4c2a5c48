// The SiTU-GLU LibTorch adapter on CPU (label unit): the LibTorch path against the double
// reference, value and LibTorch-autograd gradients, and its input errors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "k3lab/kernels/situ_glu_reference.hpp"
#include "k3lab/kernels/torch_ops.hpp"
#include "kernel_test_support.hpp"
#include "torch_test_support.hpp"

namespace k3lab::kernels {
namespace {

using testing::tensor_of;
using testing::values_of;

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
