#pragma once
// The 24 frozen agent-replay tasks of experiment 2 and their hidden validators.
//
// A task is a user instruction; the agent answers with a summary whose last line is
// "RESULT: <value>" (see agent_system_prompt()). The hidden validator of a task checks the final
// world state (it must equal the state reached by applying the task's reference mutations to a fresh
// world, in the style of tau-bench's database check) and the RESULT value (a number compared in
// cents, an id or name compared after normalize_answer(), or "FAILED: ..." for tasks whose requested
// change must be refused). The reference data lives in agent_task_reference.hpp, which agents and
// models must never include.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/validate/agent_world.hpp"

namespace k3lab::validate {

inline constexpr int kAgentTaskCount = 24;

struct AgentTask {
  std::string id;           // "T01" .. "T24"
  std::string instruction;  // the user message
  // Descriptive tags: "read", "mutation", "parallel" (needs two tool calls in one turn),
  // "multi-turn" (needs results before the next call), "refusal" (the change must fail).
  std::vector<std::string> tags;
};

// The system prompt used for every task (fixed across arms).
std::string agent_system_prompt();
// The frozen tasks, in the frozen order.
const std::vector<AgentTask>& agent_tasks();
// Throws std::invalid_argument listing the valid ids for an unknown id.
const AgentTask& agent_task(std::string_view id);

struct TaskVerdict {
  bool passed = false;      // state_ok && answer_ok
  bool state_ok = false;
  bool answer_ok = false;
  std::string result_value; // the RESULT value found ("" when none)
  std::vector<std::string> reasons;  // why it failed, one line each
};

// The value of the last "RESULT:" line (tolerates case, markdown emphasis, ':' '=' or '-'); nullopt
// when there is none.
std::optional<std::string> extract_result_value(std::string_view final_answer);

TaskVerdict validate_agent_task(std::string_view task_id, const World& world, std::string_view final_answer);
nlohmann::json task_verdict_json(const TaskVerdict& verdict);

}  // namespace k3lab::validate
