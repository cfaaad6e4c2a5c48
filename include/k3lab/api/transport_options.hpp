#pragma once
// The transport settings of a direct-API run: how long one send may take to connect, to go without a
// payload byte (stall), and in all, and the client-side rate limits that keep 429s rare. They are
// protocol fields, the `transport` section of context-probe's and agent-replay's parameters, so the
// frozen design says how long a call may take; a protocol without the section (versions before it)
// gets the defaults of TransportSettings, which are also the values the protocols write out.
//
// `k3lab run --connect-timeout/--stall-timeout/--call-timeout/--requests-per-minute/--tokens-per-minute`
// override them for one run without --unfrozen, as --served-model does: they say how patiently the
// client waits, not what is measured. Each override is recorded in the manifest's options (the keys
// below) and named on every page of the run as a deviation from the frozen transport.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/retry_policy.hpp"
#include "k3lab/core/schema.hpp"

namespace k3lab::api {

inline constexpr const char* kTransportSection = "transport";
inline constexpr const char* kConnectTimeoutOption = "connect_timeout_s";
inline constexpr const char* kStallTimeoutOption = "stall_timeout_s";
inline constexpr const char* kCallTimeoutOption = "call_timeout_s";
inline constexpr const char* kRequestsPerMinuteOption = "requests_per_minute";
inline constexpr const char* kTokensPerMinuteOption = "tokens_per_minute";

struct TransportSettings {
  double connect_timeout_s = 15;
  double stall_timeout_s = 600;    // no payload byte (SSE comments do not count) for this long
  double call_timeout_s = 1800;    // one send in all: 1M-token prompts are slow
  double requests_per_minute = 0;  // 0: no client-side limit
  double tokens_per_minute = 0;    // 0: no client-side limit
};

// The schema of parameters.transport (every field optional, defaulting to TransportSettings).
std::shared_ptr<core::Schema> transport_schema();

// parameters.transport with the defaults filled in. Throws std::invalid_argument naming
// parameters.transport.<field> when a value is not a number within its bounds.
TransportSettings protocol_transport(const nlohmann::json& parameters);

// The protocol's settings with the run options' overrides applied. Throws std::invalid_argument
// naming the option when an override is not a positive number.
TransportSettings run_transport(const nlohmann::json& parameters, const nlohmann::json& options);

// Sets config's timeouts and rate limits to run_transport(parameters, options).
void apply_transport_options(const nlohmann::json& parameters, const nlohmann::json& options, ClientConfig& config);

// One line per run option that differs from the protocol's transport, e.g.
// "stall timeout 1 s (--stall-timeout; the protocol's is 600 s)"; empty when the run is as frozen.
std::vector<std::string> transport_deviations(const nlohmann::json& parameters, const nlohmann::json& options);

// The page sentence naming the deviations of a run (its manifest's options and parameters); nullopt
// when there are none.
std::optional<std::string> transport_deviation_sentence(const nlohmann::json& manifest_options,
                                                        const nlohmann::json& parameters);

// The plan's transport block for `requests` model requests of a window of `window_hours`, each sent at
// most retry.max_sends times: the settings, the worst case (every send runs to the call timeout and
// every wait between sends to the Retry-After cap) and, with a request-rate limit, the least time the
// limit allows.
nlohmann::json transport_plan(const TransportSettings& transport, const RetryPolicy& retry, double requests,
                              double window_hours);

}  // namespace k3lab::api
