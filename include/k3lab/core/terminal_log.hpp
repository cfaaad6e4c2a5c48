#pragma once
// The process's log: lines on stdout, printed above a live progress bar (progress.hpp) so they never
// glue onto it; the level in colour only when stdout is a terminal and NO_COLOR is unset
// (https://no-color.org).
#include <memory>

#include <spdlog/logger.h>

namespace k3lab::core {

// Whether log levels are coloured: stdout is a terminal and NO_COLOR is unset or empty.
bool log_colour_wanted();

// A logger named "k3lab" writing as described above; main installs it as spdlog's default.
std::shared_ptr<spdlog::logger> make_terminal_logger();

}  // namespace k3lab::core
