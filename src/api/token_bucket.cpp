#include "k3lab/api/token_bucket.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::api {

TokenBucket::TokenBucket(double rate_per_second, double capacity, std::shared_ptr<Clock> clock)
    : rate_(rate_per_second), capacity_(capacity), clock_(std::move(clock)), tokens_(capacity) {
  if (!(rate_ > 0) || !std::isfinite(rate_)) {
    throw std::invalid_argument("token bucket rate must be a positive number, got " + std::to_string(rate_));
  }
  if (!(capacity_ > 0) || !std::isfinite(capacity_)) {
    throw std::invalid_argument("token bucket capacity must be a positive number, got " +
                                std::to_string(capacity_));
  }
  if (!clock_) throw std::invalid_argument("token bucket needs a clock");
  last_ = clock_->now();
}

void TokenBucket::refill_locked(std::chrono::steady_clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - last_).count();
  if (elapsed > 0) {
    tokens_ = std::min(capacity_, tokens_ + elapsed * rate_);
    last_ = now;
  }
}

std::chrono::nanoseconds TokenBucket::acquire(double amount) {
  if (!(amount >= 0) || !std::isfinite(amount)) {
    throw std::invalid_argument("token bucket acquire amount must be >= 0, got " + std::to_string(amount));
  }
  std::chrono::nanoseconds wait{0};
  {
    std::lock_guard lock(mutex_);
    refill_locked(clock_->now());
    tokens_ -= amount;
    if (tokens_ < 0) {
      wait = std::chrono::nanoseconds(static_cast<long long>(std::ceil(-tokens_ * 1e9 / rate_)));
    }
  }
  if (wait.count() > 0) clock_->sleep_for(wait);
  return wait;
}

double TokenBucket::available() const {
  std::lock_guard lock(mutex_);
  refill_locked(clock_->now());
  return tokens_;
}

}  // namespace k3lab::api
