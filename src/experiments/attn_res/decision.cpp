#include "attn_res/decision.hpp"

#include <stdexcept>

namespace k3lab::experiments::attn_res {

PairedGain paired_gain(const std::vector<double>& arm, const std::vector<double>& baseline, const Decision& d) {
  PairedGain g;
  g.relative_improvements =
      report::paired_effects(arm, baseline, report::PairedEffect::RelativeImprovementLowerBetter);
  g.interval = report::paired_bootstrap_interval(arm, baseline, report::PairedEffect::RelativeImprovementLowerBetter,
                                                 static_cast<std::size_t>(d.bootstrap_resamples), d.bootstrap_seed,
                                                 d.confidence);
  for (double r : g.relative_improvements) g.seeds_improved += r > 0 ? 1 : 0;
  g.meets_minimum = g.interval.estimate >= d.min_relative_improvement;
  return g;
}

double memory_regression(double arm_bytes, double baseline_bytes) {
  if (!(baseline_bytes > 0)) throw std::invalid_argument("memory_regression: the baseline memory must be positive");
  return arm_bytes / baseline_bytes - 1.0;
}

double throughput_regression(double arm_tokens_per_s, double baseline_tokens_per_s) {
  if (!(baseline_tokens_per_s > 0)) {
    throw std::invalid_argument("throughput_regression: the baseline throughput must be positive");
  }
  return 1.0 - arm_tokens_per_s / baseline_tokens_per_s;
}

std::optional<double> fraction_of_gain(double block_mean_improvement, double full_mean_improvement) {
  if (!(full_mean_improvement > 0)) return std::nullopt;
  return block_mean_improvement / full_mean_improvement;
}

}  // namespace k3lab::experiments::attn_res
