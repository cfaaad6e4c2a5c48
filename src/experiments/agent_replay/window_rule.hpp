#pragma once
// The seed's window rule: "If one arm exceeds 5% invalid runs, invalidate the whole test window rather
// than dropping that arm." A run that ends as a failure (transport exhausted, harness error) has no
// valid outcome and counts with the invalid runs of its arm.
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records);

}  // namespace k3lab::experiments::agent_replay
