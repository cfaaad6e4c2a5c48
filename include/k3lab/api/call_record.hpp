#pragma once
// What k3lab keeps about one chat call: enough for the ledger (latency, tokens, request ids, retry
// and error accounting, provenance of the serving model) and nothing it must not keep: no API key,
// no request headers, and no raw reasoning_content (only its presence, token count and SHA-256).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/error_class.hpp"

namespace k3lab::api {

struct CallRecord {
  std::size_t call_index = 0;
  std::string endpoint;         // base URL (never carries credentials: parse_endpoint rejects them)
  bool simulated = false;       // the endpoint identified itself as k3lab's mock server
  bool streamed = false;
  std::string model_requested;  // request `model`
  std::string model;            // response `model`
  std::string response_id;
  std::string system_fingerprint;
  // Response headers that identify the call (x-request-id, msh-request-id, x-msh-trace-id, ...),
  // lower-case name -> value.
  std::map<std::string, std::string> request_ids;
  // Platform/backend version headers, lower-case name -> value.
  std::map<std::string, std::string> platform_headers;
  std::string started_utc;   // first attempt's start
  std::string finished_utc;  // terminal response
  int http_status = 0;       // of the last attempt (0: no HTTP response)
  std::string finish_reason;
  bool usage_reported = false;
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_tokens = 0;
  std::int64_t completion_tokens = 0;
  bool reasoning_present = false;
  std::optional<std::int64_t> reasoning_tokens;
  std::string reasoning_sha256;  // of the reasoning_content bytes; empty when absent
  std::size_t tool_call_count = 0;
  std::optional<double> ttft_ms;  // last attempt: request start -> first content/reasoning/tool delta
  double latency_ms = 0;          // last attempt: request start -> terminal response
  double wall_ms = 0;             // all attempts and waits
  int attempts = 0;
  int transport_retries = 0;      // transport and server errors retried
  int overload_retries = 0;       // rate-limit and overload errors retried (after Retry-After)
  double waited_ms = 0;           // time slept before retries
  std::optional<double> retry_after_ms;  // the last failed send's Retry-After, when it had one
  ErrorClass error_class = ErrorClass::none;
  std::string error_message;      // redacted; empty on success
  std::vector<std::string> attempt_errors;  // error class of each failed attempt, in order

  bool ok() const { return error_class == ErrorClass::none; }
  nlohmann::json to_json() const;
};

}  // namespace k3lab::api
