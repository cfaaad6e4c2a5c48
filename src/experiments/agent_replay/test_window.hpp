#pragma once
// The seed's 24-hour test window: every run of the matrix happens inside one window of
// parameters.test_window_hours. The window opens with the first unit of a run dir (its start is kept
// in each terminal record's timing.window_start_utc and read back on resume); a unit that would start
// after the window closed is refused without a call and recorded invalid, and the window rule then
// invalidates the window.
#include <chrono>
#include <optional>
#include <string>

#include "k3lab/core/ledger.hpp"

namespace k3lab::experiments::agent_replay {

using UtcTime = std::chrono::system_clock::time_point;

struct TestWindow {
  UtcTime start;
  double hours = 24;

  UtcTime end() const;
  bool contains(UtcTime t) const { return t >= start && t < end(); }
};

// Parses "2026-08-03T12:34:56.789Z" or "2026-08-03T12:34:56Z". Throws std::invalid_argument naming
// the text.
UtcTime parse_utc(const std::string& text);

// The earliest timing.window_start_utc of any terminal record in the ledger, if one was recorded.
std::optional<UtcTime> recorded_window_start(const core::LedgerContents& ledger);

}  // namespace k3lab::experiments::agent_replay
