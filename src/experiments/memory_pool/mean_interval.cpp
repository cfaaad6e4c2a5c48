#include "memory_pool/mean_interval.hpp"

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::memory_pool {

MeanInterval mean_ci95(const std::vector<double>& values) {
  MeanInterval out;
  out.n = values.size();
  if (values.empty()) return out;
  out.mean = report::mean(values);
  out.low = out.high = out.mean;
  if (out.n < 2) return out;
  out.stddev = report::sample_stddev(values);
  const auto interval = report::t_interval_mean(values, 0.95);
  out.low = interval.low;
  out.high = interval.high;
  return out;
}

}  // namespace k3lab::experiments::memory_pool
