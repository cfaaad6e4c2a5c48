#include "k3lab/api/retry_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace k3lab::api {
namespace {

// splitmix64: a well-mixed 64-bit hash, so neighbouring keys draw unrelated jitter.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) from the key triple.
double unit_draw(std::uint64_t seed, std::uint64_t key, int sends) {
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(seed) ^ key) ^ static_cast<std::uint64_t>(sends));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace

RetryPolicy RetryPolicy::with_retries(int retries) {
  RetryPolicy policy;
  policy.max_sends = 1 + retries;
  return policy;
}

void RetryPolicy::check() const {
  if (max_sends < 1) throw std::invalid_argument("RetryPolicy.max_sends must be at least 1 (the original send)");
  if (backoff_initial.count() < 0 || backoff_max < backoff_initial) {
    throw std::invalid_argument("RetryPolicy backoff must satisfy 0 <= backoff_initial <= backoff_max");
  }
  if (retry_after_cap.count() < 0) throw std::invalid_argument("RetryPolicy.retry_after_cap must be >= 0");
  if (!(jitter >= 0 && jitter <= 1)) throw std::invalid_argument("RetryPolicy.jitter must lie in [0, 1]");
}

bool is_retryable(ErrorClass c) { return is_transport_retryable(c) || is_overload_retryable(c); }

bool RetryPolicy::may_retry(ErrorClass error_class, int sends) const {
  return is_retryable(error_class) && sends < max_sends;
}

std::chrono::nanoseconds RetryPolicy::wait_before_next(int sends, std::optional<std::chrono::nanoseconds> retry_after,
                                                       std::uint64_t request_key) const {
  using std::chrono::nanoseconds;
  if (retry_after) return std::min(*retry_after, nanoseconds(retry_after_cap));
  nanoseconds backoff = backoff_initial;
  for (int i = 1; i < sends && backoff < nanoseconds(backoff_max); ++i) backoff *= 2;
  backoff = std::min(backoff, nanoseconds(backoff_max));
  const double scale = 1.0 - jitter * unit_draw(seed, request_key, sends);
  return nanoseconds(static_cast<std::int64_t>(std::llround(static_cast<double>(backoff.count()) * scale)));
}

}  // namespace k3lab::api
