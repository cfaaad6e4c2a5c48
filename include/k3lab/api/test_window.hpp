#pragma once
// The seed's test window: every call of the matrix runs inside one window of test_window_hours
// (24 h). The window opens with the first unit of a run (its start is recorded in that unit's
// timing and read back on resume); a unit that would start after the window closed is refused
// without a call, and the window rule then stops the run.
#include <chrono>
#include <optional>
#include <string>

#include "k3lab/core/ledger.hpp"

namespace k3lab::experiments::context_probe {

using UtcTime = std::chrono::system_clock::time_point;

struct TestWindow {
  UtcTime start;
  double hours = 24;

  UtcTime end() const;
  bool contains(UtcTime t) const { return t >= start && t < end(); }
};

// Parses "2026-08-03T12:34:56.789Z" (api::format_utc's form; fraction optional). Throws
// std::invalid_argument naming the text.
UtcTime parse_utc(const std::string& text);

// The earliest timing.window_start_utc of any terminal record in the ledger, if one was recorded.
std::optional<UtcTime> recorded_window_start(const core::LedgerContents& ledger);

}  // namespace k3lab::experiments::context_probe
