#include "k3lab/api/clock.hpp"

#include <algorithm>
#include <thread>

namespace k3lab::api {

std::chrono::steady_clock::time_point SystemClock::now() const { return std::chrono::steady_clock::now(); }

std::chrono::system_clock::time_point SystemClock::utc_now() const { return std::chrono::system_clock::now(); }

void SystemClock::sleep_for(std::chrono::nanoseconds duration) {
  if (duration.count() > 0) std::this_thread::sleep_for(duration);
}

bool Clock::sleep_unless_stopped(std::chrono::nanoseconds duration, const std::atomic<bool>* stop) {
  if (!stop) {
    sleep_for(duration);
    return true;
  }
  const auto end = now() + duration;
  for (;;) {
    if (stop->load()) return false;
    const auto left = end - now();
    if (left <= std::chrono::nanoseconds(0)) return true;
    sleep_for(std::min<std::chrono::nanoseconds>(left, kStopPollInterval));
  }
}

std::shared_ptr<Clock> system_clock() {
  static const auto clock = std::make_shared<SystemClock>();
  return clock;
}

std::chrono::steady_clock::time_point ManualClock::now() const {
  std::lock_guard lock(mutex_);
  return std::chrono::steady_clock::time_point(offset_);
}

std::chrono::system_clock::time_point ManualClock::utc_now() const {
  std::lock_guard lock(mutex_);
  // A fixed epoch keeps records made under a ManualClock reproducible: 2026-01-01T00:00:00Z.
  return std::chrono::system_clock::time_point(std::chrono::seconds(1767225600)) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(offset_);
}

void ManualClock::sleep_for(std::chrono::nanoseconds duration) {
  std::lock_guard lock(mutex_);
  sleeps_.push_back(duration);
  if (duration.count() > 0) offset_ += duration;
}

bool ManualClock::sleep_unless_stopped(std::chrono::nanoseconds duration, const std::atomic<bool>* stop) {
  if (stop && stop->load()) return false;
  sleep_for(duration);
  return true;
}

void ManualClock::advance(std::chrono::nanoseconds duration) {
  std::lock_guard lock(mutex_);
  offset_ += duration;
}

std::vector<std::chrono::nanoseconds> ManualClock::sleeps() const {
  std::lock_guard lock(mutex_);
  return sleeps_;
}

}  // namespace k3lab::api
