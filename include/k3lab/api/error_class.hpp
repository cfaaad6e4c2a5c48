#pragma once
// What went wrong with a call, and whether trying again can help (api.md section 1.6).
#include <string>
#include <string_view>

namespace k3lab::api {

enum class ErrorClass {
  none,             // success
  transport,        // connect failure, reset, timeout, stream dropped or cut short, HTTP 408
  server,           // HTTP 500/502/504 and other 5xx, malformed success bodies
  rate_limit,       // HTTP 429 rate_limit_reached_error (RPM/TPM/TPD/concurrency)
  overload,         // HTTP 429 engine_overloaded_error, 503, 529
  auth,             // HTTP 401, 403 (invalid key, wrong region, permission denied, risk control)
  quota,            // HTTP 402, exceeded_current_quota_error, insufficient balance
  invalid_request,  // HTTP 400/422 invalid_request_error (incl. replay-protocol violations)
  content_filter,   // moderation refusal (error.type content_filter)
  not_found,        // HTTP 404 (bad model id or path)
  unknown,          // any other status
};

std::string_view to_string(ErrorClass error_class);

// Classifies an HTTP response by status and error body ({"error":{"type","message"}}); the
// error.type decides where the status alone is ambiguous (a 429 may be a rate limit, an overload
// or an empty balance). The body may be empty or not JSON.
ErrorClass classify(int http_status, std::string_view body);

// Classifies an error object sent inside a successful stream (HTTP 200), by its type and message.
ErrorClass classify_stream_error(std::string_view type, std::string_view message);

// Transport and server errors: resent under RetryPolicy (retry_policy.hpp), after backoff.
bool is_transport_retryable(ErrorClass error_class);
// Rate limits and overloads: resent under the same RetryPolicy cap, after Retry-After when sent.
bool is_overload_retryable(ErrorClass error_class);

// The `error.message` of an error body, or the body's first 300 bytes when it has none.
std::string error_message_of(std::string_view body);

}  // namespace k3lab::api
