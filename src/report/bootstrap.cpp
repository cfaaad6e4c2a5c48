// Seeded percentile bootstrap of a mean, and its paired form over (treatment, baseline) pairs.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/core/rng.hpp"
#include "k3lab/report/stats.hpp"
#include "stats_checks.hpp"

namespace k3lab::report {

Interval bootstrap_mean_interval(std::span<const double> values, std::size_t resamples, std::uint64_t seed,
                                 double confidence) {
  detail::check_values(values, 2, "bootstrap_mean_interval");
  detail::check_confidence(confidence, "bootstrap_mean_interval");
  if (resamples == 0) {
    throw std::invalid_argument("bootstrap_mean_interval: resamples must be at least 1 (10000 is usual)");
  }
  const std::size_t n = values.size();
  core::Rng rng(seed);
  std::vector<double> means(resamples);
  for (double& resample_mean : means) {
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) total += values[rng.below(n)];
    resample_mean = total / static_cast<double>(n);
  }
  const double alpha = 1.0 - confidence;
  return {mean(values), quantile(means, alpha / 2.0), quantile(means, 1.0 - alpha / 2.0), confidence};
}

std::vector<double> paired_effects(std::span<const double> treatment, std::span<const double> baseline,
                                   PairedEffect effect) {
  if (treatment.size() != baseline.size()) {
    throw std::invalid_argument("paired comparison: " + std::to_string(treatment.size()) + " treatment values but " +
                                std::to_string(baseline.size()) +
                                " baseline values; pair them by seed/unit and drop unpaired ones first");
  }
  detail::check_values(treatment, 1, "paired comparison (treatment)");
  detail::check_values(baseline, 1, "paired comparison (baseline)");
  std::vector<double> effects;
  effects.reserve(treatment.size());
  for (std::size_t i = 0; i < treatment.size(); ++i) {
    const double t = treatment[i];
    const double b = baseline[i];
    if (effect != PairedEffect::Difference && b == 0.0) {
      throw std::invalid_argument("paired comparison: baseline value " + std::to_string(i) +
                                  " is zero, so a relative improvement is undefined; use PairedEffect::Difference");
    }
    switch (effect) {
      case PairedEffect::Difference: effects.push_back(t - b); break;
      case PairedEffect::RelativeImprovementLowerBetter: effects.push_back((b - t) / b); break;
      case PairedEffect::RelativeImprovementHigherBetter: effects.push_back((t - b) / b); break;
    }
  }
  return effects;
}

Interval paired_bootstrap_interval(std::span<const double> treatment, std::span<const double> baseline,
                                   PairedEffect effect, std::size_t resamples, std::uint64_t seed,
                                   double confidence) {
  const std::vector<double> effects = paired_effects(treatment, baseline, effect);
  return bootstrap_mean_interval(effects, resamples, seed, confidence);
}

}  // namespace k3lab::report
