#pragma once
// What `k3lab plan memory-pool` shows beyond the unit list: counts by axis, derived memory sizes,
// trace seeds, and a time estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/sim/parameters.hpp"

namespace k3lab::experiments::memory_pool {

nlohmann::json plan_details(const sim::SimParameters& params, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::memory_pool
