#pragma once
// OpenAI-compatible chat-completions client over libcurl (Kimi/Moonshot by default).
//
// - POST {base_url}/chat/completions, streaming (SSE) or not, chosen by the request's "stream".
// - The key is read from the environment variable (MOONSHOT_API_KEY) at each call, sent as a Bearer
//   header, wiped from memory after the call, and redacted from every message and log line. It is
//   never stored in the client or in a record. Loopback endpoints may be called without a key.
// - TLS peer and host verification are always on; plain http only for loopback hosts.
// - Retries: one RetryPolicy (retry_policy.hpp) for every retryable class: at most
//   retry.max_sends sends of the identical request bytes in all, exponential backoff with seeded
//   jitter, Retry-After honoured (capped); auth, quota, invalid-request, content-filter and
//   not-found errors are never retried.
// - Interruption: when config.stop is set and becomes true (SIGINT/SIGTERM), an in-flight transfer
//   and any backoff or Retry-After wait end within about a second and complete() throws
//   CallInterrupted; nothing is recorded for that call.
// - Timeouts: connect, stall (no payload byte for that long; SSE comment lines such as
//   ": keep-alive" are not payload) and total, per send.
// - Limits shared by every call through this client (and its copies): at most max_in_flight calls
//   in flight, and optional request-rate and token-rate token buckets.
// complete() is thread-safe and reports API failures in the record instead of throwing.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/call_record.hpp"
#include "k3lab/api/chat_types.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/api/endpoint.hpp"
#include "k3lab/api/retry_policy.hpp"

namespace k3lab::api {

inline constexpr std::string_view kApiKeyEnv = "MOONSHOT_API_KEY";

struct ClientConfig {
  std::string base_url = std::string(kDefaultBaseUrl);
  std::string api_key_env = std::string(kApiKeyEnv);  // the variable's name, never the key itself

  // Transport settings (defaults documented in docs/endpoints.md; run options may change them, see
  // transport_options.hpp).
  std::chrono::milliseconds connect_timeout{15'000};
  std::chrono::milliseconds total_timeout{1'800'000};  // 30 min: 1M-token prompts are slow
  std::chrono::milliseconds stall_timeout{600'000};    // no payload byte for this long: transport error

  RetryPolicy retry;  // the seeds' cap by default: the original send plus two
  // The runner's stop flag (experiments::stop_flag()); null: calls cannot be interrupted.
  const std::atomic<bool>* stop = nullptr;

  std::size_t max_in_flight = 4;
  double requests_per_second = 0;  // 0: no request-rate limit
  double request_burst = 1;
  // 0: no token-rate limit. An attempt costs approx_token_count(request bytes) plus its
  // max_completion_tokens (or max_tokens).
  double tokens_per_minute = 0;
  double token_burst = 0;          // 0: one minute's worth

  // Response headers recorded as request ids / platform versions (case-insensitive).
  std::vector<std::string> request_id_headers = {"x-request-id", "msh-request-id", "x-msh-trace-id",
                                                 "x-trace-id",   "request-id",     "x-amzn-requestid",
                                                 "cf-ray"};
  std::vector<std::string> platform_headers = {"msh-gid", "x-model-version", "msh-model-version",
                                               "x-msh-version", "openai-version", "x-k3lab-mock"};
  // The API silently ignores unknown reasoning_effort values, so they are checked here. Empty: no
  // check. K3 accepts exactly low, high, max.
  std::vector<std::string> allowed_reasoning_efforts = {"low", "high", "max"};
};

// Thrown by complete() when config.stop became true during a send or a wait: the call has no outcome.
class CallInterrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ChatResult {
  CallRecord record;
  ChatResponse response;  // holds reasoning_content in memory for replay; empty on failure
  bool ok() const { return record.ok(); }
};

class ChatClient {
 public:
  // Throws std::invalid_argument for a bad base URL or limits.
  explicit ChatClient(ClientConfig config = {}, std::shared_ptr<Clock> clock = system_clock());

  // One call, with retries. Throws std::invalid_argument for a malformed request (checked before
  // any byte is sent) and std::runtime_error when the key is missing for a non-loopback endpoint.
  // Everything the endpoint does wrong is in the record (error_class, error_message).
  // `expected_failure`, when not empty, names why a refusal of this request is by design (an injected
  // fault, e.g. "fault arm omitted-tool-result"): a final failure is then logged as info, not a warning.
  ChatResult complete(const nlohmann::json& request, std::size_t call_index = 0,
                      const std::string& expected_failure = {}) const;

  // GET {base_url}/models: the model ids. Throws std::runtime_error (redacted) on failure.
  std::vector<std::string> list_models() const;

  const ClientConfig& config() const { return config_; }
  const Endpoint& endpoint() const { return endpoint_; }
  // Whether config().api_key_env is set and non-empty.
  bool api_key_present() const;

 private:
  struct Shared;
  ClientConfig config_;
  Endpoint endpoint_;
  std::shared_ptr<Clock> clock_;
  std::shared_ptr<Shared> shared_;
};

// The request checks complete() runs: model is a non-empty string, messages a non-empty array of
// objects with a role, stream a boolean, max_completion_tokens/max_tokens positive integers, n == 1,
// reasoning_effort one of `allowed_efforts` (when that list is non-empty).
// Throws std::invalid_argument naming the field.
void validate_chat_request(const nlohmann::json& request, const std::vector<std::string>& allowed_efforts);

}  // namespace k3lab::api
