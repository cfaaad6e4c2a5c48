#pragma once
// The seed-mean figures of the memory-pool page: the mean over seeded traces with its Student-t 95%
// interval (report::t_interval_mean), and the sample standard deviation beside it.
#include <cstddef>
#include <vector>

namespace k3lab::experiments::memory_pool {

struct MeanInterval {
  std::size_t n = 0;
  double mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 when n < 2
  double low = 0;     // mean -/+ t(0.975, n-1) * stddev / sqrt(n); equal to the mean when n < 2
  double high = 0;
};

// Zeros for no values; throws std::invalid_argument on a NaN or infinite value.
MeanInterval mean_ci95(const std::vector<double>& values);

}  // namespace k3lab::experiments::memory_pool
