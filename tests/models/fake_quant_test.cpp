// MX fake quantisation against hand-computed OCP MX values, and the straight-through gradient.
#include <k3lab/models/fake_quant.hpp>
#include <k3lab/models/random_tensor.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace k3lab::models {
namespace {

TEST(MxElement, Fp4RoundsToNearestEvenAndSaturates) {
  // E2M1 magnitudes: 0, 0.5, 1, 1.5, 2, 3, 4, 6.
  const auto x = torch::tensor({0.0, 0.2, 0.25, 0.3, 0.74, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 5.5, 7.0, 100.0, -2.6, -0.76},
                               torch::kDouble);
  const auto expected = torch::tensor({0.0, 0.0, 0.0, 0.5, 0.5, 1.0, 1.0, 2.0, 2.0, 4.0, 4.0, 6.0, 6.0, 6.0, -3.0, -1.0},
                                      torch::kDouble);
  EXPECT_TRUE(torch::equal(quantize_to_element(x, MxElement::Fp4E2M1), expected))
      << quantize_to_element(x, MxElement::Fp4E2M1);
}

TEST(MxElement, Fp8E4M3HasThreeMantissaBitsSubnormalsAndMax448) {
  const auto x = torch::tensor({1.0625, 1.1875, 300.0, 500.0, 0.001953125, 0.0029296875, 17.0}, torch::kDouble);
  // 1 + 1/16 ties to 1 (even), 1 + 3/16 ties up to 1.25, 300 -> 288 (step 32 in [256, 512)),
  // 500 saturates to 448, 2^-9 is the smallest subnormal, 1.5 * 2^-9 ties to 2^-8 (even), 17 -> 16.
  const auto expected = torch::tensor({1.0, 1.25, 288.0, 448.0, 0.001953125, 0.00390625, 16.0}, torch::kDouble);
  EXPECT_TRUE(torch::equal(quantize_to_element(x, MxElement::Fp8E4M3), expected))
      << quantize_to_element(x, MxElement::Fp8E4M3);
}

TEST(MxFakeQuantize, SharedScaleFollowsTheFloorRule) {
  // Block max 10: shared_exp = floor(log2 10) - 2 = 1, scale 2. Elements / 2 round in E2M1:
  // 10/2 = 5 -> 4 (tie to even) -> 8;  3/2 = 1.5 -> 3;  0.7/2 = 0.35 -> 0.5 -> 1;  -13/2 = -6.5 -> -6 -> -12.
  auto block = torch::zeros({32}, torch::kDouble);
  block[0] = 10.0;
  block[1] = 3.0;
  block[2] = 0.7;
  block[3] = -13.0;  // now the max: floor(log2 13) - 2 = 1, scale stays 2
  const auto q = mx_fake_quantize(block, MxElement::Fp4E2M1);
  EXPECT_DOUBLE_EQ(q[0].item<double>(), 8.0);
  EXPECT_DOUBLE_EQ(q[1].item<double>(), 3.0);
  EXPECT_DOUBLE_EQ(q[2].item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(q[3].item<double>(), -12.0);
  EXPECT_DOUBLE_EQ(q.narrow(0, 4, 28).abs().sum().item<double>(), 0.0);
}

TEST(MxFakeQuantize, BlocksAreIndependentAndErrorIsBounded) {
  core::Rng rng(3);
  auto x = normal_tensor({4, 64}, rng, 0, 1, torch::kDouble);
  x.narrow(1, 32, 32).mul_(1000.0);  // the second block of each row is 1000x larger
  const auto q = mx_fake_quantize(x, MxElement::Fp8E4M3);
  const auto rel = ((q - x).abs() / x.abs().clamp_min(1e-12));
  // E4M3 relative rounding error is <= 2^-4 for normals; tiny elements may be subnormal, and
  // elements above 448/512 of the block max may saturate (the FLOOR scale rule).
  const auto amax = x.abs().view({4, 2, 32}).amax(2, true).expand({4, 2, 32}).reshape({4, 64});
  const auto normal = (x.abs() > amax * std::pow(2.0, -6)) & (x.abs() <= amax * 0.875);
  EXPECT_LE(rel.masked_select(normal).max().item<double>(), 0.0625 + 1e-12);
  // A whole row quantised at once equals each block quantised alone.
  const auto a = mx_fake_quantize(x.narrow(1, 0, 32).contiguous(), MxElement::Fp8E4M3);
  EXPECT_TRUE(torch::equal(a, q.narrow(1, 0, 32)));
}

// OCP MX: a block holding Inf or NaN gets the NaN scale, so every element of that block decodes as NaN
// (glibc's frexp gives exponent 0 for them: the old scale 2^(-1-emax) clipped the block's finite values
// to +-0.75 in MXFP4). The other blocks of the tensor are untouched.
TEST(MxFakeQuantize, ABlockHoldingInfOrNanDecodesAsNan) {
  for (const double bad : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    for (const auto dtype : {torch::kFloat, torch::kDouble}) {
      auto x = torch::full({2, 32}, 3.0, dtype);
      x[0][5] = bad;
      const auto q = mx_fake_quantize(x, MxElement::Fp4E2M1);
      EXPECT_TRUE(q[0].isnan().all().item<bool>()) << bad << " " << q[0];
      EXPECT_TRUE(torch::equal(q[1], torch::full({32}, 3.0, dtype)));  // 3 = 1.5 * 2^1 is exact
    }
  }
}

// E8M0 scales reach 2^127. A float64 block needing more is flagged with the NaN scale (it used to clamp
// to 2^127 and saturate every element to 6 * 2^127); below 2^-127 the scale clamps and values flush.
TEST(MxFakeQuantize, ScalesOutsideE8M0AreFlaggedAboveAndFlushBelow) {
  auto huge = torch::full({32}, std::ldexp(1.0, 200), torch::kDouble);  // amax 2^200: scale 2^198
  EXPECT_TRUE(mx_fake_quantize(huge, MxElement::Fp4E2M1).isnan().all().item<bool>());
  // amax 2^129: scale 2^127, the largest: 2^129 / 2^127 = 4 is exact in E2M1.
  auto top = torch::full({32}, std::ldexp(1.0, 129), torch::kDouble);
  EXPECT_TRUE(torch::equal(mx_fake_quantize(top, MxElement::Fp4E2M1), top));
  // amax 2^-200 wants scale 2^-202, clamped to 2^-127: 2^-200 / 2^-127 = 2^-73 is below E2M1's smallest
  // step (0.5), so the block flushes to zero; a value of 2^-127 in the same block stays exact (1 * scale).
  auto tiny = torch::full({32}, std::ldexp(1.0, -200), torch::kDouble);
  EXPECT_EQ(mx_fake_quantize(tiny, MxElement::Fp4E2M1).abs().sum().item<double>(), 0.0);
  tiny[7] = std::ldexp(1.0, -127);  // now amax: floor(log2) - 2 = -129, clamped to -127
  const auto q = mx_fake_quantize(tiny, MxElement::Fp4E2M1);
  EXPECT_EQ(q[7].item<double>(), std::ldexp(1.0, -127));
  EXPECT_EQ(q[0].item<double>(), 0.0);
}

TEST(MxFakeQuantize, StraightThroughGradientIsIdentity) {
  core::Rng rng(4);
  auto x = normal_tensor({2, 32}, rng).requires_grad_(true);
  const auto w = normal_tensor({2, 32}, rng);
  const auto y = mx_fake_quantize(x, MxElement::Fp4E2M1);
  EXPECT_FALSE(torch::equal(y.detach(), x.detach()));
  (y * w).sum().backward();
  EXPECT_TRUE(torch::equal(x.grad(), w));
}

TEST(MxFakeQuantize, RejectsWidthsNotInWholeBlocks) {
  EXPECT_THROW(mx_fake_quantize(torch::ones({3, 40}), MxElement::Fp4E2M1), std::invalid_argument);
  EXPECT_TRUE(torch::equal(mx_fake_quantize(torch::ones({3, 40}), MxElement::None), torch::ones({3, 40})));
  EXPECT_THROW(mx_element_from_string("fp4"), std::invalid_argument);
  EXPECT_EQ(mx_element_from_string("mxfp8_e4m3"), MxElement::Fp8E4M3);
}

}  // namespace
}  // namespace k3lab::models
