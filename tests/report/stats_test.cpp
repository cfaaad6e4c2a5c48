// Statistics against closed forms, published critical values, numpy's documented quantiles and
// hand computations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "k3lab/core/rng.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::report {
namespace {

TEST(Descriptive, MeanAndStandardDeviations) {
  const std::vector<double> v = {2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(mean(v), 5.0);
  EXPECT_DOUBLE_EQ(population_stddev(v), 2.0);           // sum of squares 32, / 8
  EXPECT_DOUBLE_EQ(sample_stddev(v), std::sqrt(32.0 / 7.0));  // / 7
  EXPECT_DOUBLE_EQ(coefficient_of_variation(v, Spread::Population), 0.4);
  EXPECT_DOUBLE_EQ(coefficient_of_variation(v, Spread::Sample), std::sqrt(32.0 / 7.0) / 5.0);
}

TEST(Descriptive, RejectsEmptyNonFiniteAndUndefined) {
  const std::vector<double> empty;
  EXPECT_THROW(mean(empty), std::invalid_argument);
  EXPECT_THROW(sample_stddev(std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(mean(std::vector<double>{1.0, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1.0, std::numeric_limits<double>::infinity()}, 0.5),
               std::invalid_argument);
  EXPECT_THROW(coefficient_of_variation(std::vector<double>{-1.0, 1.0}, Spread::Sample), std::invalid_argument);
  EXPECT_THROW(quantile(std::vector<double>{1.0, 2.0}, 1.5), std::invalid_argument);
}

TEST(Quantile, MatchesNumpyDocumentedExamples) {
  // numpy.quantile docs: a = [[10, 7, 4], [3, 2, 1]]; quantile(a, 0.5) = 3.5,
  // along axis 0 = [6.5, 4.5, 2.5].
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{10, 7, 4, 3, 2, 1}, 0.5), 3.5);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{10, 3}, 0.5), 6.5);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{7, 2}, 0.5), 4.5);
  EXPECT_DOUBLE_EQ(quantile(std::vector<double>{4, 1}, 0.5), 2.5);
}

TEST(Quantile, Type7ByHand) {
  const std::vector<double> v = {4, 1, 3, 2};  // sorted 1 2 3 4; h = 3q
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);  // h = 0.75
  EXPECT_DOUBLE_EQ(quantile(v, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.9), 3.7);    // h = 2.7
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{5.0}), 5.0);
}

TEST(Normal, QuantileAndCdf) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
  EXPECT_NEAR(normal_quantile(0.025), -1.959963984540054, 1e-12);
  EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0.0);
  EXPECT_NEAR(normal_cdf(1.0), 0.8413447460685429, 1e-15);
  for (double p : {1e-10, 0.001, 0.2, 0.7, 0.999}) {
    EXPECT_NEAR(normal_cdf(normal_quantile(p)), p, 1e-10 * std::min(p, 1 - p)) << p;
  }
  EXPECT_THROW(normal_quantile(0.0), std::invalid_argument);
  EXPECT_THROW(normal_quantile(1.0), std::invalid_argument);
}

TEST(StudentT, PublishedCriticalValues) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706204736174698, 1e-9);
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 4), 2.776445, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 10), 3.169273, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.95, 5), 2.015048, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.025, 9), -2.262157, 1e-6);
}

TEST(StudentT, ApproachesTheNormalInTheLimit) {
  const double z = 1.959963984540054;
  EXPECT_NEAR(student_t_quantile(0.975, std::numeric_limits<double>::infinity()), z, 1e-12);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), z, 1e-5);
  EXPECT_NEAR(student_t_quantile(0.975, 1e12), z, 1e-9);
  EXPECT_GT(student_t_quantile(0.975, 1000), z);  // t is heavier-tailed for every finite df
  EXPECT_NEAR(student_t_quantile(0.975, 1000), 1.962339, 1e-6);
}

TEST(StudentT, ClosedFormsForOneAndTwoDegreesOfFreedom) {
  // df = 1 is the Cauchy distribution; df = 2 has F(t) = 1/2 + t / (2 sqrt(2 + t^2)).
  for (double t : {-30.0, -2.5, -0.3, 0.0, 0.7, 4.0, 100.0}) {
    EXPECT_NEAR(student_t_cdf(t, 1), 0.5 + std::atan(t) / std::numbers::pi, 1e-13) << t;
    EXPECT_NEAR(student_t_cdf(t, 2), 0.5 + t / (2.0 * std::sqrt(2.0 + t * t)), 1e-13) << t;
  }
  for (double p : {0.001, 0.1, 0.6, 0.975, 0.9999}) {
    EXPECT_NEAR(student_t_quantile(p, 1), std::tan(std::numbers::pi * (p - 0.5)),
                1e-9 * std::fabs(std::tan(std::numbers::pi * (p - 0.5))) + 1e-12) << p;
    EXPECT_NEAR(student_t_quantile(p, 2), (2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-9) << p;
  }
}

// P(0 < T < t) by composite Simpson's rule on the density: an independent route to the CDF.
double t_cdf_by_integration(double t, double df) {
  const double log_norm = std::lgamma((df + 1) / 2) - std::lgamma(df / 2) - 0.5 * std::log(df * std::numbers::pi);
  const auto pdf = [&](double x) { return std::exp(log_norm - (df + 1) / 2 * std::log1p(x * x / df)); };
  const int n = 20000;
  const double h = t / n;
  double sum = pdf(0) + pdf(t);
  for (int i = 1; i < n; ++i) sum += (i % 2 ? 4.0 : 2.0) * pdf(i * h);
  return 0.5 + sum * h / 3.0;
}

TEST(StudentT, CdfAgreesWithNumericalIntegrationForNonIntegerDf) {
  for (double df : {0.5, 3.5, 9.0, 57.0}) {
    for (double t : {0.4, 1.3, 2.9}) {
      EXPECT_NEAR(student_t_cdf(t, df), t_cdf_by_integration(t, df), 1e-10) << "df " << df << " t " << t;
    }
    EXPECT_NEAR(student_t_cdf(student_t_quantile(0.9, df), df), 0.9, 1e-12);
  }
}

TEST(StudentT, RejectsBadArguments) {
  EXPECT_THROW(student_t_quantile(0.975, 0.0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(0.975, std::nan("")), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1.0, 5.0), std::invalid_argument);
}

TEST(TInterval, ByHand) {
  // 1..5: mean 3, s = sqrt(2.5), se = sqrt(0.5), t(0.975, 4) = 2.776445.
  const Interval ci = t_interval_mean(std::vector<double>{1, 2, 3, 4, 5});
  const double half = 2.776445105197799 * std::sqrt(0.5);
  EXPECT_DOUBLE_EQ(ci.estimate, 3.0);
  EXPECT_NEAR(ci.low, 3.0 - half, 1e-9);
  EXPECT_NEAR(ci.high, 3.0 + half, 1e-9);
  EXPECT_NEAR(ci.low, 1.036757, 1e-6);
  EXPECT_THROW(t_interval_mean(std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(t_interval_mean(std::vector<double>{1.0, 2.0}, 1.0), std::invalid_argument);
}

TEST(Wilson, AgainstTheQuadraticItSolves) {
  // The Wilson bounds are the roots p of (phat - p)^2 = z^2 p (1 - p) / n.
  const double z = 1.959963984540054;
  for (auto [k, n] : {std::pair{8, 10}, std::pair{1, 3}, std::pair{50, 200}, std::pair{0, 10}, std::pair{10, 10}}) {
    const Interval ci = wilson_interval(k, n);
    const double phat = static_cast<double>(k) / n;
    const double a = 1 + z * z / n;
    const double b = -(2 * phat + z * z / n);
    const double c = phat * phat;
    const double root = std::sqrt(b * b - 4 * a * c);
    EXPECT_NEAR(ci.low, (-b - root) / (2 * a), 1e-12) << k << "/" << n;
    EXPECT_NEAR(ci.high, (-b + root) / (2 * a), 1e-12) << k << "/" << n;
    EXPECT_DOUBLE_EQ(ci.estimate, phat);
  }
}

TEST(Wilson, HandComputedValues) {
  const Interval ci = wilson_interval(8, 10);
  EXPECT_NEAR(ci.low, 0.4902, 1e-4);
  EXPECT_NEAR(ci.high, 0.9433, 1e-4);
  const Interval none = wilson_interval(0, 10);  // [0, z^2 / (n + z^2)]
  EXPECT_DOUBLE_EQ(none.low, 0.0);
  EXPECT_NEAR(none.high, 3.841459 / 13.841459, 1e-6);
  EXPECT_THROW(wilson_interval(0, 0), std::invalid_argument);
  EXPECT_THROW(wilson_interval(11, 10), std::invalid_argument);
}

TEST(Bootstrap, DeterministicForAFixedSeed) {
  core::Rng rng(7);
  std::vector<double> v(25);
  for (double& x : v) x = rng.normal(1.0, 2.0);
  const Interval a = bootstrap_mean_interval(v, 2000, 42);
  const Interval b = bootstrap_mean_interval(v, 2000, 42);
  const Interval c = bootstrap_mean_interval(v, 2000, 43);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_TRUE(a.low != c.low || a.high != c.high);
  EXPECT_DOUBLE_EQ(a.estimate, mean(v));
}

TEST(Bootstrap, MatchesTheExactSpreadOfTheResampledMean) {
  // 1..20 is symmetric about its true mean 10.5. The resampled mean has standard deviation
  // sigma_pop / sqrt(n) = sqrt(33.25 / 20) exactly, so the 95% percentile interval is close to
  // 10.5 -+ 1.96 * 1.2894 = [7.973, 13.027].
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  const Interval ci = bootstrap_mean_interval(v, 20000, 2024);
  EXPECT_TRUE(ci.contains(10.5));
  const double half = 1.959963984540054 * std::sqrt(33.25 / 20.0);
  EXPECT_NEAR(ci.low, 10.5 - half, 0.15);
  EXPECT_NEAR(ci.high, 10.5 + half, 0.15);
}

TEST(Bootstrap, TwoPointSampleGivesItsExtremes) {
  // Resampled means of {0, 1} are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the 2.5% and 97.5%
  // percentiles are 0 and 1.
  const Interval ci = bootstrap_mean_interval(std::vector<double>{0.0, 1.0}, 4000, 1);
  EXPECT_DOUBLE_EQ(ci.low, 0.0);
  EXPECT_DOUBLE_EQ(ci.high, 1.0);
  const Interval constant = bootstrap_mean_interval(std::vector<double>{3.0, 3.0, 3.0}, 100, 1);
  EXPECT_DOUBLE_EQ(constant.low, 3.0);
  EXPECT_DOUBLE_EQ(constant.high, 3.0);
  EXPECT_THROW(bootstrap_mean_interval(std::vector<double>{1.0, 2.0}, 0, 1), std::invalid_argument);
  EXPECT_THROW(bootstrap_mean_interval(std::vector<double>{1.0}, 100, 1), std::invalid_argument);
}

TEST(PairedBootstrap, EffectsByHand) {
  const std::vector<double> treatment = {0.98, 2.2, 3.0};
  const std::vector<double> baseline = {1.0, 2.0, 3.0};
  const auto diff = paired_effects(treatment, baseline, PairedEffect::Difference);
  const auto lower = paired_effects(treatment, baseline, PairedEffect::RelativeImprovementLowerBetter);
  const auto higher = paired_effects(treatment, baseline, PairedEffect::RelativeImprovementHigherBetter);
  EXPECT_NEAR(diff[0], -0.02, 1e-15);
  EXPECT_NEAR(diff[1], 0.2, 1e-15);
  EXPECT_NEAR(lower[0], 0.02, 1e-15);
  EXPECT_NEAR(lower[1], -0.1, 1e-15);
  EXPECT_NEAR(higher[1], 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(lower[2], 0.0);
  EXPECT_THROW(paired_effects(treatment, std::vector<double>{1.0, 2.0}, PairedEffect::Difference),
               std::invalid_argument);
  EXPECT_THROW(paired_effects(treatment, std::vector<double>{1.0, 0.0, 1.0}, PairedEffect::RelativeImprovementLowerBetter),
               std::invalid_argument);
}

TEST(PairedBootstrap, ResamplesPairsNotArmsSeparately) {
  // Baselines vary wildly between seeds but every treatment is exactly 1 lower: the paired
  // interval of the difference is [-1, -1]; resampling the arms independently would be wide.
  const std::vector<double> baseline = {3.0, 10.0, 4.5, 8.0, 20.0};
  std::vector<double> treatment;
  for (double b : baseline) treatment.push_back(b - 1.0);
  const Interval ci = paired_bootstrap_interval(treatment, baseline, PairedEffect::Difference, 1000, 5);
  EXPECT_NEAR(ci.low, -1.0, 1e-12);
  EXPECT_NEAR(ci.high, -1.0, 1e-12);
}

TEST(PairedBootstrap, OneLuckySeedDoesNotExcludeZero) {
  // attn-res's boundary: a gain on one seed and losses on the others is not a reliable gain.
  const std::vector<double> baseline = {3.00, 3.00, 3.00, 3.00, 3.00};
  const std::vector<double> treatment = {2.70, 3.01, 3.02, 3.01, 3.02};
  const Interval ci =
      paired_bootstrap_interval(treatment, baseline, PairedEffect::RelativeImprovementLowerBetter, 10000, 11);
  EXPECT_GT(ci.estimate, 0.0);  // the mean looks like a gain...
  EXPECT_FALSE(ci.excludes_zero());  // ...but the interval says it is not established
  EXPECT_NEAR(ci.estimate, (0.10 - 0.01 / 3 * 2 - 0.02 / 3 * 2) / 5, 1e-12);
}

}  // namespace
}  // namespace k3lab::report
