#pragma once
// The simulator's percentiles: nearest rank, as the engine reports queue delays and stranded
// memory. (The page's seed means and intervals use report/stats.hpp.)
#include <cstdint>
#include <vector>

namespace k3lab::sim {

// Nearest-rank percentile: the smallest value with at least p of the data at or below it
// (rank ceil(p * n), 1-based). Reorders `values`. Returns 0 for an empty vector.
std::int64_t nearest_rank_percentile(std::vector<std::int64_t>& values, double p);

}  // namespace k3lab::sim
