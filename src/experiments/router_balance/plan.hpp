#pragma once
// What `k3lab plan router-balance` shows beyond the unit list: runs by axis, updates, tokens, expert
// capacity and a labelled GPU-hour estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::router_balance
