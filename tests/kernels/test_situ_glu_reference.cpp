// Unit tests of the SiTU-GLU host reference (label unit): the value against the K3 formula written
// independently (tanh from exponentials), the derivatives against central finite differences, the
// bound beta_gate * beta_up, and the SwiGLU limit for large betas.
#include <gtest/gtest.h>

#include <cmath>

#include "k3lab/kernels/situ_glu_reference.hpp"
#include "kernel_test_support.hpp"

namespace k3lab::kernels {
namespace {

double tanh_from_exp(double x) { return (std::exp(2 * x) - 1) / (std::exp(2 * x) + 1); }

TEST(SituGluReference, MatchesFormula) {
  testing::TestRng rng = testing::seeded_rng();
  for (int i = 0; i < 200; ++i) {
    const double gate = rng.normal(0.0, 6.0), up = rng.normal(0.0, 30.0);
    const double expected = 4.0 * tanh_from_exp(gate / 4.0) / (1.0 + std::exp(-gate)) * 25.0 *
                            tanh_from_exp(up / 25.0);
    EXPECT_NEAR(situ_glu_reference(gate, up).value, expected, 1e-12 * (1.0 + std::abs(expected)));
  }
}

TEST(SituGluReference, DerivativesMatchFiniteDifferences) {
  testing::TestRng rng = testing::seeded_rng();
  const SituGluBetas betas{3.0f, 7.0f};
  const double eps = 1e-6;
  for (int i = 0; i < 200; ++i) {
    const double gate = rng.normal(0.0, 5.0), up = rng.normal(0.0, 10.0);
    const SituGluPoint p = situ_glu_reference(gate, up, betas);
    const double dg = (situ_glu_reference(gate + eps, up, betas).value -
                       situ_glu_reference(gate - eps, up, betas).value) / (2 * eps);
    const double du = (situ_glu_reference(gate, up + eps, betas).value -
                       situ_glu_reference(gate, up - eps, betas).value) / (2 * eps);
    EXPECT_NEAR(p.d_gate, dg, 1e-7 * (1.0 + std::abs(dg)));
    EXPECT_NEAR(p.d_up, du, 1e-7 * (1.0 + std::abs(du)));
  }
}

TEST(SituGluReference, BoundedByProductOfBetas) {
  // |out| <= beta_gate * beta_up = 100, approached for large positive gate and large |up|.
  EXPECT_LE(std::abs(situ_glu_reference(1e3, -1e4).value), 100.0);
  EXPECT_NEAR(std::abs(situ_glu_reference(200.0, -2000.0).value), 100.0, 1e-9);
}

TEST(SituGluReference, ApproachesSwiGluForLargeBetas) {
  const SituGluBetas wide{1e6f, 1e6f};
  for (double gate : {-3.0, -0.5, 0.7, 2.5}) {
    for (double up : {-2.0, 0.3, 4.0}) {
      const double swiglu = gate / (1.0 + std::exp(-gate)) * up;
      EXPECT_NEAR(situ_glu_reference(gate, up, wide).value, swiglu, 1e-6);
    }
  }
}

TEST(SituGluReference, BackwardArraysScaleByUpstream) {
  const std::vector<double> gate{0.5, -1.0}, up{2.0, 3.0}, d_out{1.5, -2.0};
  std::vector<double> d_gate, d_up;
  situ_glu_backward_reference(gate, up, d_out, d_gate, d_up);
  EXPECT_DOUBLE_EQ(d_gate[1], -2.0 * situ_glu_reference(-1.0, 3.0).d_gate);
  EXPECT_DOUBLE_EQ(d_up[0], 1.5 * situ_glu_reference(0.5, 2.0).d_up);
  EXPECT_THROW(situ_glu_forward_reference({1.0}, {1.0, 2.0}), std::invalid_argument);
}

TEST(SituGluShapeCheck, RejectsBadStridesAndBetas) {
  SituGluShape shape = SituGluShape::contiguous(4, 8);
  shape.up_stride = 4;
  EXPECT_THROW(situ_glu_validate(shape, {}), std::invalid_argument);
  EXPECT_THROW(situ_glu_validate(SituGluShape::contiguous(4, 8), {0.0f, 25.0f}),
               std::invalid_argument);
  EXPECT_NO_THROW(situ_glu_validate({4, 8, 16, 16, 8}, {}));
}

}  // namespace
}  // namespace k3lab::kernels
