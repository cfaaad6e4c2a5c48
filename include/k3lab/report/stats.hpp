#pragma once
// The statistics that report pages quote: descriptive summaries, Student-t and Wilson intervals and
// the seeded paired bootstrap named by the protocols (e.g. attn-res: "a paired bootstrap 95%
// confidence interval" of the mean relative improvement over seeds).
//
// Every function rejects empty input and NaN/inf values with std::invalid_argument: exclude invalid
// units (with their reason, in the ledger) before summarising, never by silently dropping them here.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace k3lab::report {

struct Interval {
  double estimate = 0.0;  // the point estimate (mean, proportion...)
  double low = 0.0;
  double high = 0.0;
  double confidence = 0.95;

  bool contains(double value) const { return low <= value && value <= high; }
  bool excludes_zero() const { return !contains(0.0); }
};

double mean(std::span<const double> values);

// Sample standard deviation (divides by n - 1). Needs at least two values.
double sample_stddev(std::span<const double> values);

// Population standard deviation (divides by n), e.g. over every expert of a router.
double population_stddev(std::span<const double> values);

// Which standard deviation a coefficient of variation uses: Sample for draws from a larger
// population (runs, seeds), Population when the values are the whole population (every expert).
enum class Spread { Sample, Population };

// Standard deviation divided by the mean. Throws when the mean is zero.
double coefficient_of_variation(std::span<const double> values, Spread spread);

// Quantile q in [0, 1] by linear interpolation between order statistics: Hyndman-Fan type 7, the
// default of numpy.quantile/percentile and of R's quantile(). The input need not be sorted.
double quantile(std::span<const double> values, double q);
double median(std::span<const double> values);

// Standard normal distribution function and its inverse (p in (0, 1)).
double normal_cdf(double z);
double normal_quantile(double p);

// Student t distribution with `df` > 0 degrees of freedom (not necessarily an integer; infinity
// gives the normal). Computed from the regularized incomplete beta function, not a table.
double student_t_cdf(double t, double df);
double student_t_quantile(double p, double df);

// Mean with a two-sided Student-t interval: mean +- t_{(1+c)/2, n-1} * s / sqrt(n). Needs n >= 2.
Interval t_interval_mean(std::span<const double> values, double confidence = 0.95);

// Wilson score interval for a proportion of `successes` out of `trials` (trials > 0).
Interval wilson_interval(std::uint64_t successes, std::uint64_t trials, double confidence = 0.95);

// Percentile bootstrap interval of the mean: `resamples` resamples of size n drawn with replacement
// by k3lab::core::Rng(seed); the interval ends are the type-7 quantiles (1-c)/2 and (1+c)/2 of the
// resampled means. Same inputs and seed, same interval, on every platform.
Interval bootstrap_mean_interval(std::span<const double> values, std::size_t resamples, std::uint64_t seed,
                                 double confidence = 0.95);

// How a paired comparison of a treatment with its baseline (same seed, same unit) is expressed.
enum class PairedEffect {
  Difference,                   // treatment - baseline
  RelativeImprovementLowerBetter,   // (baseline - treatment) / baseline, e.g. loss
  RelativeImprovementHigherBetter,  // (treatment - baseline) / baseline, e.g. accuracy, throughput
};

// The per-pair effects; throws on unequal lengths, or a zero baseline for a relative effect.
std::vector<double> paired_effects(std::span<const double> treatment, std::span<const double> baseline,
                                   PairedEffect effect);

// Paired bootstrap: resamples whole pairs (the per-pair effects) and reports the percentile interval
// of their mean, as bootstrap_mean_interval does. Estimate is the mean effect.
Interval paired_bootstrap_interval(std::span<const double> treatment, std::span<const double> baseline,
                                   PairedEffect effect, std::size_t resamples, std::uint64_t seed,
                                   double confidence = 0.95);

}  // namespace k3lab::report
