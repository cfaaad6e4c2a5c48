#pragma once
// The transport settings of a direct-API run: how long one send may take to connect, to go without a
// payload byte (stall), and in all. They are run options (recorded in the manifest's options, set by
// `k3lab run --connect-timeout/--stall-timeout/--call-timeout`), not protocol fields: adding fields to
// a frozen protocol would change the hash every existing run is bound to. Defaults (ClientConfig):
// connect 15 s, stall 600 s, total 1800 s per send. A client-side rate limit (requests and tokens per
// minute, `--requests-per-minute`/`--tokens-per-minute`) keeps 429s rare; none by default.
#include <nlohmann/json.hpp>

#include "k3lab/api/chat_client.hpp"

namespace k3lab::api {

inline constexpr const char* kConnectTimeoutOption = "connect_timeout_s";
inline constexpr const char* kStallTimeoutOption = "stall_timeout_s";
inline constexpr const char* kCallTimeoutOption = "call_timeout_s";
inline constexpr const char* kRequestsPerMinuteOption = "requests_per_minute";
inline constexpr const char* kTokensPerMinuteOption = "tokens_per_minute";

// Sets config's timeouts and rate limits from options (absent keys keep the defaults). Throws std::invalid_argument
// naming the option when a value is not a positive number of seconds.
void apply_transport_options(const nlohmann::json& options, ClientConfig& config);

}  // namespace k3lab::api
