#pragma once
// What `k3lab plan agent-replay` shows beyond the unit list: runs by axis, call bounds, the window rule.
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

// Invalid runs one arm may have before the window is invalidated (more than this invalidates it).
std::size_t tolerated_invalid_runs_per_arm(const Parameters& p);

}  // namespace k3lab::experiments::agent_replay
