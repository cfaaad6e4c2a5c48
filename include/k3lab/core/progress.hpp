#pragma once
// Progress for long runs, as tqdm draws it: on a terminal, one bar on stderr that fits the terminal's
// width (read again at every redraw, so a resize is followed), with units done, rate, elapsed and ETA;
// log lines are printed above it (terminal_log.hpp) without breaking it. When stderr is not a terminal,
// plain periodic log lines instead (spdlog, so SPDLOG_LEVEL applies).
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace k3lab::core {

class Progress {
 public:
  Progress(std::string label, std::size_t total, std::size_t already_done = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  // A unit finished.
  void advance(std::size_t n = 1);
  // Fraction of the current unit (0..1), for long units.
  void within_unit(double fraction);
  void finish();

 private:
  void draw(bool force);
  std::string label_;
  std::size_t total_;
  std::size_t done_;
  std::size_t done_at_start_;
  double partial_ = 0;
  bool tty_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// For `run --all`: every bar is prefixed "[k/n]" and shows the batch's total elapsed time. count 0
// ends the batch.
void set_progress_batch(std::size_t index, std::size_t count);

// Writes one complete line to `stream` above the live bar (cleared first, redrawn after), or plainly
// when no bar is drawn. Thread-safe with the bar's own redraws.
void print_above_progress(std::FILE* stream, const std::string& line);

// One bar line fitted to `columns` (exposed for tests): the label, a bar as wide as the rest leaves
// (none below 10 characters), then the counts; cut to columns - 1 characters at most.
std::string fit_progress_line(const std::string& label, double fraction, const std::string& counts,
                              std::size_t columns);

}  // namespace k3lab::core
