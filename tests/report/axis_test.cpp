// Tick choice: 1-2-5 steps on linear axes, decades (or 1-2-5 within them) on log axes.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "k3lab/core/rng.hpp"
#include "k3lab/report/svg.hpp"

namespace k3lab::report {
namespace {

using Ticks = std::vector<double>;

void expect_ticks(const Axis& axis, const Ticks& expected) {
  ASSERT_EQ(axis.ticks.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(axis.ticks[i], expected[i], 1e-12 * std::fabs(expected[i])) << "tick " << i;
  }
  EXPECT_EQ(axis.lo, axis.ticks.front());
  EXPECT_EQ(axis.hi, axis.ticks.back());
}

TEST(LinearAxis, HandPickedRanges) {
  expect_ticks(linear_axis(0.0, 1.0), {0.0, 0.2, 0.4, 0.6, 0.8, 1.0});
  expect_ticks(linear_axis(0.3, 9.7), {0.0, 2.0, 4.0, 6.0, 8.0, 10.0});
  expect_ticks(linear_axis(-3.2, 7.1), {-5.0, 0.0, 5.0, 10.0});
  expect_ticks(linear_axis(1000.0, 1003.0), {1000.0, 1001.0, 1002.0, 1003.0});
  expect_ticks(linear_axis(0.3, 0.6), {0.3, 0.4, 0.5, 0.6});  // 0.3 is on a tick, not below it
  EXPECT_EQ(linear_axis(0.3, 0.6).ticks[0], 0.3);            // and it is exactly the double 0.3
  expect_ticks(linear_axis(-0.4, 0.9, 3), {-1.0, 0.0, 1.0});  // straddling zero needs three ticks
}

TEST(LinearAxis, DegenerateRangeIsWidenedWithoutCrossingZero) {
  // All-zero data (an accuracy of 0 everywhere) gets [0, 1], not [-1, 1]: no impossible values shown.
  expect_ticks(linear_axis(0.0, 0.0), {0.0, 0.2, 0.4, 0.6, 0.8, 1.0});
  const Axis five = linear_axis(5.0, 5.0);
  EXPECT_LT(five.lo, 5.0);
  EXPECT_GT(five.hi, 5.0);
  EXPECT_GE(five.lo, 0.0);
  const Axis small = linear_axis(0.02, 0.02);
  EXPECT_GE(small.lo, 0.0);
  EXPECT_GT(small.hi, 0.02);
  const Axis negative = linear_axis(-3.0, -3.0);
  EXPECT_LT(negative.lo, -3.0);
  EXPECT_LE(negative.hi, 0.0);
  EXPECT_GT(negative.hi, -3.0);
}

TEST(LinearAxis, PropertiesOverRandomRanges) {
  core::Rng rng(99);
  for (int trial = 0; trial < 2000; ++trial) {
    const double scale = std::pow(10.0, rng.uniform(-6.0, 8.0));
    const double a = rng.uniform(-1.0, 1.0) * scale;
    const double b = a + rng.uniform(1e-3, 3.0) * scale;
    const int max_ticks = 3 + static_cast<int>(rng.below(7));
    const Axis axis = linear_axis(a, b, max_ticks);
    ASSERT_LE(axis.ticks.size(), static_cast<std::size_t>(max_ticks));
    ASSERT_GE(axis.ticks.size(), 2u);
    EXPECT_LE(axis.lo, a + 1e-9 * axis.step);
    EXPECT_GE(axis.hi, b - 1e-9 * axis.step);
    const double exponent = std::floor(std::log10(axis.step) + 1e-9);
    const double mantissa = axis.step / std::pow(10.0, exponent);
    EXPECT_TRUE(std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 || std::fabs(mantissa - 5) < 1e-9)
        << "step " << axis.step;
    for (std::size_t i = 1; i < axis.ticks.size(); ++i) {
      EXPECT_NEAR(axis.ticks[i] - axis.ticks[i - 1], axis.step, 1e-9 * axis.step);
    }
  }
}

TEST(LinearAxis, RejectsBadRanges) {
  EXPECT_THROW(linear_axis(2.0, 1.0), std::invalid_argument);
  EXPECT_THROW(linear_axis(0.0, std::nan("")), std::invalid_argument);
  EXPECT_THROW(linear_axis(0.0, 1.0, 2), std::invalid_argument);
}

TEST(LogAxis, DecadesForWideRanges) {
  expect_ticks(log_axis(1.0, 1000.0), {1.0, 10.0, 100.0, 1000.0});
  expect_ticks(log_axis(3.0, 300.0), {1.0, 10.0, 100.0, 1000.0});
  expect_ticks(log_axis(0.02, 7e4), {0.01, 0.1, 1, 10, 100, 1000, 1e4, 1e5});
}

TEST(LogAxis, OneTwoFiveInsideNarrowRanges) {
  expect_ticks(log_axis(30.0, 80.0), {10.0, 20.0, 50.0, 100.0});
  expect_ticks(log_axis(2.0, 50.0), {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0});
  expect_ticks(log_axis(100.0, 100.0), {10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0});
  expect_ticks(log_axis(0.003, 0.004), {0.001, 0.002, 0.005, 0.01});
}

TEST(LogAxis, EveryOtherDecadeBeyondTen) {
  expect_ticks(log_axis(1e-3, 1e9), {1e-3, 1e-1, 1e1, 1e3, 1e5, 1e7, 1e9});
  const Axis thirteen = log_axis(1e-3, 1e10);  // 13 decades: stride 2, widened to end on a tick
  expect_ticks(thirteen, {1e-3, 1e-1, 1e1, 1e3, 1e5, 1e7, 1e9, 1e11});
  EXPECT_LE(log_axis(1e-30, 1e30).ticks.size(), 11u);
}

TEST(LogAxis, RejectsNonPositive) {
  EXPECT_THROW(log_axis(0.0, 10.0), std::invalid_argument);
  EXPECT_THROW(log_axis(-1.0, 10.0), std::invalid_argument);
}

TEST(TickLabels, LinearUseTheStepsDecimals) {
  const Axis axis = linear_axis(0.0, 1.0);
  std::vector<std::string> labels;
  for (double t : axis.ticks) labels.push_back(tick_label(t, axis));
  EXPECT_EQ(labels, (std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
  const Axis big = linear_axis(0.0, 4e6);
  EXPECT_EQ(tick_label(big.ticks[1], big), "1e+06");
  const Axis integers = linear_axis(-3.2, 7.1);
  EXPECT_EQ(tick_label(integers.ticks[0], integers), "-5");
  EXPECT_EQ(tick_label(integers.ticks[1], integers), "0");
}

TEST(TickLabels, LogLabels) {
  const Axis plain = log_axis(1e-3, 1e5);
  EXPECT_EQ(tick_label(1e-3, plain), "0.001");
  EXPECT_EQ(tick_label(10.0, plain), "10");
  EXPECT_EQ(tick_label(1e5, plain), "100000");
  const Axis wide = log_axis(1e-3, 1e9);  // reaches past 1e5: every label in exponent form
  EXPECT_EQ(tick_label(1e-3, wide), "1e-03");
  EXPECT_EQ(tick_label(10.0, wide), "1e+01");
  EXPECT_EQ(tick_label(1e7, wide), "1e+07");
  const Axis tiny = log_axis(1e-5, 3e-5);
  EXPECT_EQ(tick_label(2e-5, tiny), "2e-05");
}

TEST(AxisFraction, LinearAndLog) {
  EXPECT_DOUBLE_EQ(axis_fraction(5.0, linear_axis(0.0, 10.0)), 0.5);
  EXPECT_NEAR(axis_fraction(10.0, log_axis(1.0, 100.0)), 0.5, 1e-15);
}

}  // namespace
}  // namespace k3lab::report
