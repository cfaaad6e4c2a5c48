#pragma once
// k3lab's local OpenAI-compatible endpoint (cpp-httplib): POST /v1/chat/completions (streamed and
// not), GET /v1/models and GET /v1/models/{id} (404 model_not_found for an id it does not serve). Used by tests in-process on an ephemeral loopback port, by dry runs of the
// API experiments when no key is set, and by `k3lab mock-server --port N`.
//
// Behaviour, in request order:
//  1. auth: when required_api_key is set, a missing or different Bearer key gets 401. The 401
//     message deliberately echoes the presented key, as careless servers do, so tests can prove the
//     client redacts it.
//  2. body (mock_request_check.hpp): not a well-typed chat request -> 400 invalid_request_error naming
//     the field (stream not boolean, limits not positive integers, n != 1, malformed tools, ...);
//     a model not in `models` -> 404 model_not_found, as the OpenAI API answers.
//  3. faults (FaultPlan): decided per attempt from (seed, hash of the exact body, how many times this
//     body was seen before), so they are deterministic whatever the arrival order, and a retry of the
//     identical request is attempt k+1 of the same body.
//  4. replay contract (check_replay_protocol) and context window -> 400 with Kimi's wording.
//  5. the model (MockModel) replies; max_completion_tokens (default 1024, as Kimi documents) cuts
//     reasoning first, then content, dropping tool calls, with finish_reason "length".
//  6. usage, streamed only when the request sets stream_options.include_usage (OpenAI); where it
//     goes is usage_placement (the default, in the finish chunk's choice and a trailing chunk, is a
//     Kimi divergence observed on K3; UsagePlacement::top_level is the OpenAI shape). Every choice
//     carries "logprobs": null. prompt_tokens = approx_token_count(rendered prompt bytes); cached_tokens from the prefix
//     cache (whole blocks); completion_tokens = approx tokens of reasoning + content + tool calls.
// The rendered prompt is `tools` JSON then each message's JSON, one per line, in request order, so a
// reordered tool list or an edited early message changes the bytes the cache sees.
// Every response carries the header `x-k3lab-mock: 1` and system_fingerprint "k3lab-mock", so a record
// can say "simulated endpoint". Ids depend on the request, never on arrival order: x-request-id and
// msh-request-id "mock-req-<hex>" and the completion id "chatcmpl-mock-<hex>", where <hex> hashes the
// session (begin_session), the method, path and body, and how many identical requests the session saw
// before. A run that restarts its process is therefore answered with the ids of an uninterrupted one.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/mock_model.hpp"

namespace k3lab::api {

enum class FaultKind {
  none,
  rate_limit,        // 429 rate_limit_reached_error with Retry-After
  overload,          // 429 engine_overloaded_error with Retry-After
  server_error,      // 500 server_error
  unavailable,       // 503 with Retry-After
  drop_mid_stream,   // the connection closes after about half of the response bytes
  slow_first_token,  // waits first_token_delay before the first content-bearing bytes
  // (script only) a stream that sends ": keep-alive" comments every keepalive_interval and no payload,
  // until the client goes away or stall_limit passes, then closes; a non-streamed reply waits stall_limit
  stall_keepalive,
};

std::string_view to_string(FaultKind kind);

struct FaultPlan {
  std::uint64_t seed = 0;
  // Per-attempt probabilities (their sum must be <= 1).
  double rate_limit = 0;
  double overload = 0;
  double server_error = 0;
  double unavailable = 0;
  double drop_mid_stream = 0;
  double slow_first_token = 0;
  // Attempts with k >= this (k counts earlier arrivals of the identical body) are never faulted by
  // the probabilities, so a client that retries enough eventually succeeds.
  int max_faulted_attempts = 2;
  // When non-empty, overrides the probabilities: attempt k of every distinct body gets script[k]
  // (none beyond the end).
  std::vector<FaultKind> script;
  int retry_after_seconds = 1;  // sent with 429/503; negative: no Retry-After header
  std::chrono::milliseconds first_token_delay{200};
  std::chrono::milliseconds keepalive_interval{100};
  std::chrono::milliseconds stall_limit{30'000};
};

enum class UsagePlacement {
  choice,               // choices[0].usage on the finishing chunk (moonshot-v1, K2.5)
  top_level,            // a trailing {"choices":[],"usage":{...}} chunk (OpenAI include_usage)
  choice_and_trailing,  // both, identical (observed on K3): a client must not count it twice
};

struct MockServerOptions {
  std::string host = "127.0.0.1";
  std::vector<std::string> models = {"kimi-k3"};
  MockModel model = echo_model();
  FaultPlan faults;
  std::optional<std::string> required_api_key;
  bool thinking_default = true;  // thinking on unless the request says thinking.type = disabled
  // ASSUMPTION (protocol_check.hpp rule 3, not confirmed on Kimi): a tool message that answers no
  // open tool_call_id, or one already answered, gets a 400; false ignores it.
  bool strict_tool_messages = true;
  std::uint64_t context_window_tokens = 1'048'576;
  std::uint64_t default_max_completion_tokens = 1024;
  std::size_t cache_block_bytes = 1024;  // 256 approx tokens
  UsagePlacement usage_placement = UsagePlacement::choice_and_trailing;
  bool report_reasoning_tokens = false;  // completion_tokens_details.reasoning_tokens (not seen from Kimi)
  std::size_t stream_piece_bytes = 16;   // content/reasoning/arguments delta size (at UTF-8 boundaries)
  std::size_t wire_write_bytes = 0;      // >0: SSE bytes are written in pieces this small
  bool crlf = false;                     // SSE lines end with CRLF instead of LF
  bool keep_alive_comment = true;        // start each stream with a ": keep-alive" comment
  bool log_bodies = false;  // keep parsed request bodies in received() (tests; memory grows per call)
};

struct MockRequestRecord {
  std::size_t sequence = 0;  // arrival order (never sent: ids derive from the request)
  std::string request_id;    // the <hex> of its ids (see above)
  std::string path;
  int status = 0;
  FaultKind fault = FaultKind::none;
  int attempt = 0;           // earlier arrivals of the identical body
  std::uint64_t body_hash = 0;
  bool had_authorization = false;  // whether an Authorization header came (its value is not kept)
  bool stream = false;
  nlohmann::json body;       // parsed body when log_bodies, else null
};

class MockServer {
 public:
  // Throws std::invalid_argument for inconsistent options (probabilities, sizes).
  explicit MockServer(MockServerOptions options = {});
  ~MockServer();
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  // Binds host:port (0: an ephemeral port) and serves on a background thread. Returns the bound
  // port. Throws std::runtime_error when the port cannot be bound or the server already runs.
  int start(int port = 0);
  // Stops serving and joins the thread; safe to call twice.
  void stop();
  // Binds and serves on the calling thread until stop() is called from elsewhere (the CLI's
  // `mock-server` subcommand). Throws std::runtime_error when the port cannot be bound.
  void serve(int port);

  int port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT/v1"

  std::vector<MockRequestRecord> received() const;
  std::size_t max_concurrent_requests() const;  // peak number of chat requests in progress at once
  void clear_cache();
  // From now on, answers as a server started afresh for `session`: forgets earlier arrivals (fault
  // attempts and id counts restart) and the prompt cache, and salts ids with `session`. An experiment
  // that calls it before each unit gets answers that depend on the unit alone, not on what ran before
  // it in the process. Call it between requests, not during one.
  void begin_session(std::string_view session);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The prompt bytes the mock's cache and token counts see (see above).
std::string render_prompt(const nlohmann::json& request);

// The embedded mock a direct-API run calls when choose_endpoint picks it: started on an ephemeral
// loopback port and logged as a simulated endpoint. It must outlive the run's calls.
std::unique_ptr<MockServer> start_embedded_mock(MockServerOptions options, std::string_view experiment_id);

}  // namespace k3lab::api
