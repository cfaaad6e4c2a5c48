#include "agent_replay/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::agent_replay {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"control",         "content-only",         "effort-change",
                                               "omitted-tool-result", "truncated-completion", "no-idempotency-key",
                                               "reordered-tools"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string expected, got;
    for (const auto& id : arm_ids()) expected += (expected.empty() ? "" : ", ") + id;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("agent-replay: arms must be exactly the seed's control and six fault arms {" +
                                expected + "}; found {" + got + "}");
  }
}

std::string unit_id(int task, const std::string& arm, int rep) {
  return "task=" + std::to_string(task) + "/arm=" + arm + "/rep=" + std::to_string(rep);
}

nlohmann::json fault_spec(const Parameters& p, const std::string& arm) {
  const auto& f = p.faults;
  if (arm == "control") return nullptr;
  if (arm == "content-only") return {{"replay", "assistant content only: reasoning_content and tool_calls dropped"}};
  if (arm == "effort-change") {
    return {{"from_turn", f.effort_change_from_turn}, {"from_effort", p.reasoning_effort},
            {"to_effort", f.effort_change_to}};
  }
  if (arm == "omitted-tool-result") {
    return {{"omit", f.omitted_result_position}, {"where", "the first turn that returns two tool calls"}};
  }
  if (arm == "truncated-completion") {
    return {{"turn", f.truncated_completion_turn}, {"max_completion_tokens", f.truncated_completion_tokens}};
  }
  if (arm == "no-idempotency-key") {
    return {{"duplicate_dispatches", 1},
            {"where", "the first mutating tool call, dispatched twice without an idempotency key"},
            {"reset_fixture_after_run", true}};
  }
  if (arm == "reordered-tools") return {{"from_turn", f.reordered_tools_from_turn}};
  throw std::invalid_argument("agent-replay: unknown arm \"" + arm + "\"");
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  std::vector<Unit> units;
  units.reserve(static_cast<std::size_t>(p.repetitions) * p.task_count * arm_ids().size());
  for (int rep = 1; rep <= p.repetitions; ++rep) {
    for (int task = 1; task <= p.task_count; ++task) {
      for (const auto& arm : arm_ids()) {
        units.push_back({unit_id(task, arm, rep),
                         {{"arm", arm},
                          {"task", task},
                          {"rep", rep},
                          {"max_model_turns", p.max_model_turns},
                          {"fault", fault_spec(p, arm)}}});
      }
    }
  }
  return units;
}

}  // namespace k3lab::experiments::agent_replay
