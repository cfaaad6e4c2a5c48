#pragma once
// Time as the API layer sees it: a monotonic clock for latencies, UTC for records, and a sleep that
// tests can replace (ManualClock) so that Retry-After and rate-limit waits cost no real time.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "k3lab/core/provenance.hpp"

namespace k3lab::api {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point now() const = 0;
  virtual std::chrono::system_clock::time_point utc_now() const = 0;
  virtual void sleep_for(std::chrono::nanoseconds duration) = 0;
  // A wait that ends early once *stop is true (stop may be null: then a plain sleep_for). Returns
  // false when stopped. Signal handlers can only set an atomic flag, so the real clock polls it
  // every kStopPollInterval: a stopped wait ends within that much time.
  virtual bool sleep_unless_stopped(std::chrono::nanoseconds duration, const std::atomic<bool>* stop);
};

inline constexpr std::chrono::milliseconds kStopPollInterval{50};

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override;
  std::chrono::system_clock::time_point utc_now() const override;
  void sleep_for(std::chrono::nanoseconds duration) override;
};

// The process-wide real clock.
std::shared_ptr<Clock> system_clock();

// Virtual time: sleep_for returns at once, advances the time and records the duration. A wait with a
// stop flag is one recorded sleep unless the flag is already set (then none).
class ManualClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override;
  std::chrono::system_clock::time_point utc_now() const override;
  void sleep_for(std::chrono::nanoseconds duration) override;
  bool sleep_unless_stopped(std::chrono::nanoseconds duration, const std::atomic<bool>* stop) override;

  void advance(std::chrono::nanoseconds duration);
  std::vector<std::chrono::nanoseconds> sleeps() const;

 private:
  mutable std::mutex mutex_;
  std::chrono::nanoseconds offset_{0};
  std::vector<std::chrono::nanoseconds> sleeps_;
};

// "2026-08-03T12:34:56.789Z" (the ledger's own timestamp form).
using core::format_utc;

}  // namespace k3lab::api
