#pragma once
// Per-run protocol metrics of agent-replay that are computed from a conversation or from usage.
#include <cstddef>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"

namespace k3lab::experiments::agent_replay {

// Tool-call ids of assistant messages without exactly one tool message answering them, plus tool
// messages whose tool_call_id no assistant message called (the seed's "unmatched tool calls"),
// counted over `messages` as they were (or would next be) sent.
std::size_t count_unmatched_tool_calls(const nlohmann::json& messages);

// Tool calls in assistant messages naming a tool that `tools` (the request's declarations) lacks.
std::size_t count_unexpected_tool_names(const nlohmann::json& messages, const nlohmann::json& tools);

// USD of one call from the protocol's price table: cached prompt tokens at the cache-hit price, the
// rest of the prompt at the cache-miss price, completion tokens (reasoning included) at the output
// price. Throws std::invalid_argument when cached > prompt or a count is negative.
double call_cost_usd(const Parameters& p, std::int64_t prompt_tokens, std::int64_t cached_tokens,
                     std::int64_t completion_tokens);

}  // namespace k3lab::experiments::agent_replay
