#pragma once
// The one retry policy of the direct-API experiments (context-probe's client and agent-replay's
// resumed model turns use the same object): which failures may be sent again, how many sends one
// request may have in all, and how long to wait before the next send.
//
// - Every retryable class counts against one cap: a request is sent at most max_sends times whatever
//   mix of transport, server, rate-limit and overload errors it met (the seeds: the original send
//   plus two retries). Auth, quota, invalid-request, content-filter and not-found are never retried.
// - The wait before send k+1 (k >= 1 sends so far) is the server's Retry-After when it sent one
//   (capped at retry_after_cap), else exponential backoff backoff_initial * 2^(k-1), capped at
//   backoff_max, with jitter: the wait is drawn from [(1 - jitter) * b, b] by a hash of
//   (seed, request key, k), so runs with the same seed wait the same and concurrent clients spread out.
#include <chrono>
#include <cstdint>
#include <optional>

#include "k3lab/api/error_class.hpp"

namespace k3lab::api {

struct RetryPolicy {
  int max_sends = 3;
  std::chrono::milliseconds backoff_initial{1'000};
  std::chrono::milliseconds backoff_max{8'000};
  std::chrono::milliseconds retry_after_cap{60'000};  // a TPD 429 once said Retry-After: 1152
  double jitter = 0.5;                                // 0: exact backoff; must lie in [0, 1]
  std::uint64_t seed = 0;

  // The policy with the seeds' cap: the original send plus `retries`.
  static RetryPolicy with_retries(int retries);

  // Throws std::invalid_argument naming the bad field.
  void check() const;

  // Whether a send that failed with `error_class`, after `sends` sends of this request, is sent again.
  bool may_retry(ErrorClass error_class, int sends) const;

  // The wait before the next send after `sends` failed sends (sends >= 1). `request_key` tells
  // requests apart for the jitter draw (e.g. the call index).
  std::chrono::nanoseconds wait_before_next(int sends, std::optional<std::chrono::nanoseconds> retry_after,
                                            std::uint64_t request_key) const;
};

// Whether a failure of this class is worth sending again at all (transport, server, rate limit, overload).
bool is_retryable(ErrorClass error_class);

}  // namespace k3lab::api
