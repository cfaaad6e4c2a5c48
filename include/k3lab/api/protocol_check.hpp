#pragma once
// The replay contract of the Kimi API (api.md section 1.8), as a checker. The mock server answers a
// violation with HTTP 400 and these messages; agent-replay can run the same check on a history
// before sending it.
//
// Documented by Kimi (observed 400s, exact wording):
//  1. thinking on: every assistant message with tool_calls carries reasoning_content
//     ("thinking is enabled but reasoning_content is missing in assistant tool call message at
//     index N"). Absent, null or empty all count as missing.
//  2. every tool_call_id of an assistant message is answered by a tool message before the next
//     non-tool message (or the end of the history).
// Seen on OpenAI-compatible providers, not confirmed on Kimi; applied only when
// strict_tool_messages (the mock's default, configurable because it is an assumption):
//  3. a tool message must answer an id of the immediately preceding assistant tool_calls, and each
//     id at most once.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::api {

struct ProtocolViolation {
  enum class Kind { malformed, missing_reasoning, unanswered_tool_call, unknown_tool_call_id };
  Kind kind;
  std::size_t message_index;  // where the violation was detected
  std::string message;        // the API-style error message
};

// nullopt when the messages follow the contract. Rule 1 applies when thinking_enabled, rule 3 when
// strict_tool_messages (otherwise a stray tool message is ignored).
std::optional<ProtocolViolation> check_replay_protocol(const nlohmann::json& messages, bool thinking_enabled,
                                                       bool strict_tool_messages = true);

// Whether a request runs with thinking: `thinking.type` "enabled"/"disabled" decides when present
// (K2.x); otherwise `default_on` (K3 always reasons).
bool thinking_enabled(const nlohmann::json& request, bool default_on);

}  // namespace k3lab::api
