#pragma once
// The seed's window rule: "If one arm exceeds 5% invalid runs, invalidate the whole test window rather
// than dropping that arm." A run that ends as a failure (transport exhausted, harness error) has no
// valid outcome and counts with the invalid runs of its arm. The window also stops at the first call
// error that shows a misconfigured endpoint, and when an arm has more runs than the limit that the
// endpoint rejected before any fault was applied.
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

std::unique_ptr<WindowRule> invalid_window_rule(const Parameters& p);

// The verdict of a fresh rule over `terminal_records`.
WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records);

}  // namespace k3lab::experiments::agent_replay
