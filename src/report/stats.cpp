// Descriptive statistics and the closed-form intervals (Student t for a mean, Wilson for a rate).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/report/stats.hpp"
#include "stats_checks.hpp"

namespace k3lab::report {

namespace detail {

void check_values(std::span<const double> values, std::size_t minimum, const char* who) {
  if (values.size() < minimum) {
    throw std::invalid_argument(std::string(who) + " needs at least " + std::to_string(minimum) +
                                (minimum == 1 ? " value" : " values") + ", got " + std::to_string(values.size()));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      throw std::invalid_argument(std::string(who) + ": value " + std::to_string(i) +
                                  " is NaN or infinite; exclude invalid units (recording why) before summarising");
    }
  }
}

void check_confidence(double confidence, const char* who) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw std::invalid_argument(std::string(who) + ": confidence must lie strictly between 0 and 1 (e.g. 0.95), got " +
                                std::to_string(confidence));
  }
}

}  // namespace detail

namespace {

double sum_squared_deviations(std::span<const double> values) {
  const double m = mean(values);
  double total = 0.0;
  for (double v : values) total += (v - m) * (v - m);
  return total;
}

}  // namespace

double mean(std::span<const double> values) {
  detail::check_values(values, 1, "mean");
  double total = 0.0;
  for (double v : values) total += v;
  return total / static_cast<double>(values.size());
}

double sample_stddev(std::span<const double> values) {
  detail::check_values(values, 2, "sample_stddev");
  return std::sqrt(sum_squared_deviations(values) / static_cast<double>(values.size() - 1));
}

double population_stddev(std::span<const double> values) {
  detail::check_values(values, 1, "population_stddev");
  return std::sqrt(sum_squared_deviations(values) / static_cast<double>(values.size()));
}

double coefficient_of_variation(std::span<const double> values, Spread spread) {
  const double m = mean(values);
  if (m == 0.0) {
    throw std::invalid_argument("coefficient_of_variation: the mean is zero, so the CV is undefined; report the "
                                "standard deviation instead");
  }
  const double sd = spread == Spread::Sample ? sample_stddev(values) : population_stddev(values);
  return sd / std::fabs(m);
}

double quantile(std::span<const double> values, double q) {
  detail::check_values(values, 1, "quantile");
  if (!(q >= 0.0 && q <= 1.0)) {
    throw std::invalid_argument("quantile: q must lie in [0, 1] (0.5 is the median), got " + std::to_string(q));
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double h = (static_cast<double>(sorted.size()) - 1.0) * q;
  const auto below = static_cast<std::size_t>(std::floor(h));
  if (below + 1 >= sorted.size()) return sorted.back();
  return sorted[below] + (h - static_cast<double>(below)) * (sorted[below + 1] - sorted[below]);
}

double median(std::span<const double> values) { return quantile(values, 0.5); }

Interval t_interval_mean(std::span<const double> values, double confidence) {
  detail::check_values(values, 2, "t_interval_mean");
  detail::check_confidence(confidence, "t_interval_mean");
  const double n = static_cast<double>(values.size());
  const double m = mean(values);
  const double half = student_t_quantile(0.5 + confidence / 2.0, n - 1.0) * sample_stddev(values) / std::sqrt(n);
  return {m, m - half, m + half, confidence};
}

Interval wilson_interval(std::uint64_t successes, std::uint64_t trials, double confidence) {
  if (trials == 0) {
    throw std::invalid_argument("wilson_interval: no trials; a pass rate needs at least one attempt");
  }
  if (successes > trials) {
    throw std::invalid_argument("wilson_interval: " + std::to_string(successes) + " successes out of only " +
                                std::to_string(trials) + " trials; check the counts");
  }
  detail::check_confidence(confidence, "wilson_interval");
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(successes) / n;
  const double z = normal_quantile(0.5 + confidence / 2.0);
  const double z2 = z * z;
  const double denominator = 1.0 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denominator;
  const double half = z / denominator * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n));
  return {p, std::max(0.0, centre - half), std::min(1.0, centre + half), confidence};
}

}  // namespace k3lab::report
