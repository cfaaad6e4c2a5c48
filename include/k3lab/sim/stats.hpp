#pragma once
// The few statistics the memory-pool report needs, written here so that they are inspectable:
// nearest-rank percentiles, and the mean with a Student-t 95% interval over seeded traces.
#include <cstdint>
#include <vector>

namespace k3lab::sim {

// P(T <= t) for Student's t with `df` degrees of freedom (regularized incomplete beta).
double student_t_cdf(double t, double df);
// The t with P(T <= t) = p, for 0 < p < 1.
double student_t_quantile(double p, double df);

struct MeanInterval {
  std::size_t n = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double low = 0;     // mean -/+ t(0.975, n-1) * stddev / sqrt(n); equal to the mean when n < 2
  double high = 0;
};
MeanInterval mean_ci95(const std::vector<double>& values);

// Nearest-rank percentile: the smallest value with at least p of the data at or below it
// (rank ceil(p * n), 1-based). Reorders `values`. Returns 0 for an empty vector.
std::int64_t nearest_rank_percentile(std::vector<std::int64_t>& values, double p);

}  // namespace k3lab::sim
