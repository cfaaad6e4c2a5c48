#include "k3lab/validate/agent_loop.hpp"

#include <set>
#include <stdexcept>

#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::validate {

AgentLoopResult run_plain_agent_loop(World& world, std::string_view instruction, const AgentModel& model,
                                     int max_model_turns) {
  AgentLoopResult out;
  out.messages = nlohmann::json::array();
  out.messages.push_back({{"role", "system"}, {"content", agent_system_prompt()}});
  out.messages.push_back({{"role", "user"}, {"content", std::string(instruction)}});
  const nlohmann::json tools = world_tool_schemas();
  std::set<std::string> declared;
  for (const auto& t : tools) declared.insert(t["function"]["name"].get<std::string>());

  while (out.model_turns < max_model_turns) {
    const nlohmann::json reply = model(out.messages, tools);
    ++out.model_turns;
    if (!reply.is_object() || reply.value("role", "") != "assistant") {
      throw std::invalid_argument("run_plain_agent_loop: the model returned " + reply.dump() +
                                  "; it must return an assistant message object");
    }
    out.messages.push_back(reply);
    const bool has_calls = reply.contains("tool_calls") && reply["tool_calls"].is_array() && !reply["tool_calls"].empty();
    if (!has_calls) {
      const nlohmann::json content = reply.value("content", nlohmann::json(""));
      out.final_content = content.is_string() ? content.get<std::string>() : content.dump();
      out.answered = true;
      break;
    }
    for (const auto& call : reply["tool_calls"]) {
      const std::string name = call["function"].value("name", "");
      const nlohmann::json arguments = call["function"].value("arguments", nlohmann::json("{}"));
      if (declared.count(name) == 0) ++out.unexpected_tool_names;
      const ToolOutcome outcome = world.call_with_arguments_text(
          name, arguments.is_string() ? arguments.get<std::string>() : arguments.dump());
      ++out.tool_calls;
      out.messages.push_back({{"role", "tool"}, {"tool_call_id", call.value("id", "")}, {"content", outcome.content()}});
    }
  }
  return out;
}

}  // namespace k3lab::validate
