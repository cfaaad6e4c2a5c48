#include "k3lab/sim/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "k3lab/report/stats.hpp"

namespace k3lab::sim {

MeanInterval mean_ci95(const std::vector<double>& values) {
  MeanInterval out;
  out.n = values.size();
  if (values.empty()) return out;
  double sum = 0;
  for (double v : values) sum += v;
  out.mean = sum / static_cast<double>(out.n);
  out.low = out.high = out.mean;
  if (out.n < 2) return out;
  double squares = 0;
  for (double v : values) squares += (v - out.mean) * (v - out.mean);
  out.stddev = std::sqrt(squares / static_cast<double>(out.n - 1));
  const double half = report::student_t_quantile(0.975, static_cast<double>(out.n - 1)) * out.stddev /
                      std::sqrt(static_cast<double>(out.n));
  out.low = out.mean - half;
  out.high = out.mean + half;
  return out;
}

std::int64_t nearest_rank_percentile(std::vector<std::int64_t>& values, double p) {
  if (values.empty()) return 0;
  const auto n = values.size();
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace k3lab::sim
