#pragma once
// The seed's test window of the direct-API experiments: every call of the matrix runs inside one
// window of test_window_hours (24 h). The window opens with the first unit of a run dir (its start
// is kept in each terminal record's timing.window_start_utc and read back on resume); a unit that
// would start after the window closed is refused without a call, and the experiment's window rule
// then stops the run.
#include <chrono>
#include <optional>
#include <string>

#include "k3lab/core/ledger.hpp"

namespace k3lab::api {

using UtcTime = std::chrono::system_clock::time_point;

struct TestWindow {
  UtcTime start;
  double hours = 24;

  UtcTime end() const;
  bool contains(UtcTime t) const { return t >= start && t < end(); }
};

// Parses "2026-08-03T12:34:56.789Z" (format_utc's form; fraction optional). Throws
// std::invalid_argument naming the text.
UtcTime parse_utc(const std::string& text);

// The earliest timing.window_start_utc of any terminal record in the ledger, if one was recorded.
std::optional<UtcTime> recorded_window_start(const core::LedgerContents& ledger);

// The run's window: the recorded start, else `now` cut to the millisecond, because records keep
// milliseconds and a call finishing in the opening millisecond must read as inside.
TestWindow open_test_window(const core::LedgerContents& ledger, double hours, UtcTime now);

}  // namespace k3lab::api
