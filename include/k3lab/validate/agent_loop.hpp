#pragma once
// A plain in-process agent loop over the agent-replay world: the documented protocol with no fault.
// The experiment's real loop (HTTP, faults, retries) lives in the experiment module; this one exists
// so that tasks, validators and model stand-ins can be exercised without a server.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "k3lab/validate/agent_world.hpp"

namespace k3lab::validate {

// Returns one assistant message for (messages, tools).
using AgentModel = std::function<nlohmann::json(const nlohmann::json& messages, const nlohmann::json& tools)>;

struct AgentLoopResult {
  nlohmann::json messages;  // the whole conversation, system and user messages first
  std::string final_content;
  int model_turns = 0;
  bool answered = false;  // a reply without tool calls arrived within the turn limit
  std::size_t tool_calls = 0;
  std::size_t unexpected_tool_names = 0;  // calls to names not declared in the tools array
};

inline constexpr int kMaxModelTurns = 8;

// Messages start with {"role":"system","content":agent_system_prompt()} and the instruction; tools are
// world_tool_schemas(). Each tool call is dispatched to `world` in order and answered by one tool
// message with its tool_call_id. Stops at the first reply without tool calls or after
// max_model_turns replies. Throws std::invalid_argument when a reply is not an assistant message.
AgentLoopResult run_plain_agent_loop(World& world, std::string_view instruction, const AgentModel& model,
                                     int max_model_turns = kMaxModelTurns);

}  // namespace k3lab::validate
