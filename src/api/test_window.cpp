#include "k3lab/api/test_window.hpp"

#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace k3lab::api {

UtcTime TestWindow::end() const {
  return start + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                     std::chrono::duration<double, std::ratio<3600>>(hours));
}

UtcTime parse_utc(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  char tail[8] = {0};
  const int n = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%7s", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, tail);
  const bool with_fraction = n == 8 && std::string(tail) == "Z";
  bool whole_seconds = false;
  if (!with_fraction) {
    tm = std::tm{};
    millis = 0;
    tail[0] = '\0';
    whole_seconds = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%7s", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                                &tm.tm_hour, &tm.tm_min, &tm.tm_sec, tail) == 7 &&
                    std::string(tail) == "Z";
  }
  if (!with_fraction && !whole_seconds) {
    throw std::invalid_argument("not a UTC timestamp like 2026-08-03T12:34:56.789Z: \"" + text + "\"");
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t seconds = timegm(&tm);
  return std::chrono::system_clock::from_time_t(seconds) + std::chrono::milliseconds(millis);
}

std::optional<UtcTime> recorded_window_start(const core::LedgerContents& ledger) {
  std::optional<UtcTime> earliest;
  for (const auto& r : ledger.records) {
    if (!core::is_terminal_kind(r.value("kind", ""))) continue;
    const auto timing = r.find("timing");
    if (timing == r.end() || !timing->is_object() || !timing->contains("window_start_utc")) continue;
    const auto start = parse_utc((*timing)["window_start_utc"].get<std::string>());
    if (!earliest || start < *earliest) earliest = start;
  }
  return earliest;
}

TestWindow open_test_window(const core::LedgerContents& ledger, double hours, UtcTime now) {
  TestWindow window;
  window.hours = hours;
  window.start = recorded_window_start(ledger).value_or(std::chrono::floor<std::chrono::milliseconds>(now));
  return window;
}

}  // namespace k3lab::api
