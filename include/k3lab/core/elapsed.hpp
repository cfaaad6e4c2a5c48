#pragma once
// Wall time since a steady-clock instant, in seconds (timings in records and benchmarks).
#include <chrono>

namespace k3lab::core {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace k3lab::core
