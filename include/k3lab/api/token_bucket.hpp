#pragma once
// Client-side rate limit: a token bucket that refills at `rate` per second up to `capacity`.
// acquire() reserves first and waits for the deficit (the reservation model), so the long-run rate
// is exact, bursts never exceed the capacity, and a request larger than the capacity is still
// admitted after a proportional wait instead of blocking forever.
#include <chrono>
#include <memory>
#include <mutex>

#include "k3lab/api/clock.hpp"

namespace k3lab::api {

class TokenBucket {
 public:
  // rate > 0 and capacity > 0, else std::invalid_argument. The bucket starts full.
  TokenBucket(double rate_per_second, double capacity, std::shared_ptr<Clock> clock);

  // Takes `amount` (>= 0) and sleeps on the clock until the bucket would have held it.
  // Returns the time waited. Thread-safe.
  std::chrono::nanoseconds acquire(double amount);

  // Tokens available now (negative while reservations are outstanding).
  double available() const;

 private:
  void refill_locked(std::chrono::steady_clock::time_point now) const;

  double rate_;
  double capacity_;
  std::shared_ptr<Clock> clock_;
  mutable std::mutex mutex_;
  mutable double tokens_;
  mutable std::chrono::steady_clock::time_point last_;
};

}  // namespace k3lab::api
