#include "k3lab/sim/stats.hpp"

#include <algorithm>
#include <cmath>

namespace k3lab::sim {

std::int64_t nearest_rank_percentile(std::vector<std::int64_t>& values, double p) {
  if (values.empty()) return 0;
  const auto n = values.size();
  auto rank = static_cast<std::size_t>(std::ceil(p * static_cast<double>(n)));
  rank = std::clamp<std::size_t>(rank, 1, n);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(rank - 1), values.end());
  return values[rank - 1];
}

}  // namespace k3lab::sim
