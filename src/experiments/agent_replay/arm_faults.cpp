#include "agent_replay/arm_faults.hpp"

#include <stdexcept>

#include "agent_replay/units.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::experiments::agent_replay {

Arm arm_from_id(const std::string& id) {
  static const std::pair<const char*, Arm> table[] = {
      {"control", Arm::control},
      {"content-only", Arm::content_only},
      {"effort-change", Arm::effort_change},
      {"omitted-tool-result", Arm::omitted_tool_result},
      {"truncated-completion", Arm::truncated_completion},
      {"no-idempotency-key", Arm::no_idempotency_key},
      {"reordered-tools", Arm::reordered_tools},
  };
  for (const auto& [name, arm] : table) {
    if (id == name) return arm;
  }
  std::string valid;
  for (const auto& name : arm_ids()) valid += (valid.empty() ? "" : ", ") + name;
  throw std::invalid_argument("agent-replay: unknown arm \"" + id + "\"; the arms are " + valid);
}

std::string arm_id(Arm arm) { return arm_ids().at(static_cast<std::size_t>(arm)); }

nlohmann::json declared_tools() { return validate::world_tool_schemas(); }

nlohmann::json reordered_tools() {
  const nlohmann::json tools = declared_tools();
  nlohmann::json out = nlohmann::json::array();
  for (auto it = tools.rbegin(); it != tools.rend(); ++it) out.push_back(*it);
  return out;
}

ArmFaults::ArmFaults(Arm arm, const Parameters& parameters)
    : arm_(arm), p_(parameters), declared_(declared_tools()), reordered_(reordered_tools()) {}

std::string ArmFaults::effort_at(int turn) const {
  if (arm_ == Arm::effort_change && turn >= p_.faults.effort_change_from_turn) return p_.faults.effort_change_to;
  return p_.reasoning_effort;
}

std::int64_t ArmFaults::max_completion_tokens_at(int turn) const {
  if (arm_ == Arm::truncated_completion && turn == p_.faults.truncated_completion_turn) {
    return p_.faults.truncated_completion_tokens;
  }
  return p_.max_completion_tokens;
}

bool ArmFaults::tools_reordered_at(int turn) const {
  return arm_ == Arm::reordered_tools && turn >= p_.faults.reordered_tools_from_turn;
}

const nlohmann::json& ArmFaults::tools_at(int turn) const { return tools_reordered_at(turn) ? reordered_ : declared_; }

nlohmann::json ArmFaults::replayed(const nlohmann::json& assistant) const {
  if (arm_ != Arm::content_only) return assistant;
  return {{"role", "assistant"}, {"content", assistant.value("content", nlohmann::json(""))}};
}

std::optional<std::size_t> ArmFaults::omitted_result(std::size_t call_count, bool omitted_before) const {
  if (arm_ != Arm::omitted_tool_result || omitted_before || call_count < 2) return std::nullopt;
  return p_.faults.omitted_result_position == "first" ? 0 : 1;
}

bool ArmFaults::request_fault_at(int turn) const {
  return effort_at(turn) != p_.reasoning_effort || max_completion_tokens_at(turn) != p_.max_completion_tokens ||
         tools_reordered_at(turn);
}

}  // namespace k3lab::experiments::agent_replay
