#pragma once
// A deterministic scripted "agent model" for experiment 2: the mock server's model.
//
// It receives the chat messages and the tools array exactly as an OpenAI-compatible endpoint would
// and returns one assistant message. It understands the instruction forms of the frozen tasks (and
// the same forms with other ids, amounts and names), plans the tool calls from the declared tools and
// the tool results found in the conversation, and never reads the hidden validators.
//
// Behaviour, all derived from the messages (the agent keeps no state between calls):
// - The instruction is the last user message; only tool calls and tool results after it count.
// - A call is "answered" when a tool message with its tool_call_id exists. Independent calls that are
//   still unanswered are issued together in one turn (parallel tool calls). A call whose result is
//   missing from the history (for example one of two results omitted) is issued again.
// - Every mutating call carries idempotency_key = "k3-" + 16 hex digits of SHA-256(instruction, tool,
//   canonical arguments): a re-issued mutation reuses its key, so the world does not run it twice.
// - Tool call ids are "functions.<name>:<n>" with n counting every tool call in the conversation.
// - reasoning_content states the recognised request, the facts read so far and the next step; it is
//   present on every reply (its length grows with reasoning_effort "low" < "high" <= "max").
// - A final reply is a one-line summary followed by "RESULT: <value>"; a tool error ends the task
//   with "RESULT: FAILED: <message>"; a needed tool missing from `tools` ends it with
//   "RESULT: FAILED: the tool <name> is not available"; an unknown instruction gets
//   "RESULT: FAILED: unsupported request".
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::validate {

struct ScriptedAgentOptions {
  std::string reasoning_effort = "max";  // "low", "high" or "max"
};

struct AgentTurn {
  nlohmann::json message;     // {"role":"assistant","content":...,"reasoning_content":...,["tool_calls":[...]]}
  std::string finish_reason;  // "tool_calls" or "stop"
};

// Throws std::invalid_argument (naming the field) when `messages` is not an array of objects with a
// string "role", or `tools` is not an array of function declarations, or the effort is unknown.
AgentTurn scripted_agent_reply(const nlohmann::json& messages, const nlohmann::json& tools,
                               const ScriptedAgentOptions& options = {});

}  // namespace k3lab::validate
