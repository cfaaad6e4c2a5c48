#pragma once
// The seed's window rule: "If more than 5% of scored cells are invalid, stop the test window and
// rerun the complete matrix later." A scored cell without a valid measurement (recorded invalid, or a
// failure after the transport retries) counts against the limit; priming calls do not, because a
// failed priming call already makes its warm cell invalid (no cached tokens).
// The window also stops, whatever the count, as soon as any unit (scored or priming) was refused or
// invalidated because the test window (test_window_hours, 24 h) had closed: reason "window-expired",
// and at the first failed call whose error shows a misconfigured endpoint.
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "context_probe/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

std::unique_ptr<WindowRule> invalid_window_rule(const Parameters& p);

// The verdict of a fresh rule over `terminal_records`.
WindowVerdict check_invalid_window(const Parameters& p, const std::vector<nlohmann::json>& terminal_records);

}  // namespace k3lab::experiments::context_probe
