#pragma once
// Progress for long runs: a bar with ETA on stderr when it is a terminal, plain periodic log lines
// (spdlog, so SPDLOG_LEVEL applies) otherwise.
#include <chrono>
#include <cstddef>
#include <string>

namespace k3lab::core {

class Progress {
 public:
  Progress(std::string label, std::size_t total, std::size_t already_done = 0);
  ~Progress();
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

}  // namespace k3lab::core
