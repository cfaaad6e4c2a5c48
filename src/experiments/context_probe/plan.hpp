#pragma once
// What `k3lab plan context-probe` shows beyond the unit list: counts by axis, the window rule in
// cells, and token and cost bounds from the protocol's price table.
#include <vector>

#include <nlohmann/json.hpp>

#include "context_probe/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

// The number of scored cells whose invalidity the window tolerates (more than this stops it).
std::size_t tolerated_invalid_cells(const Parameters& p, std::size_t scored_cells);

}  // namespace k3lab::experiments::context_probe
