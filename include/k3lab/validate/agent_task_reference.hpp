#pragma once
// HIDDEN: the reference solution behind each agent-replay task's validator. For validators, tests and
// reports only; an agent or model implementation must never include this header.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/validate/world_state.hpp"

namespace k3lab::validate {

struct ReferenceMutation {
  std::string tool;
  nlohmann::json arguments;  // without an idempotency key
};

enum class ResultKind {
  number,  // one number equal (in cents) to `value`
  exact,   // normalize_answer() equal to `value`
  failed,  // starts with "failed"
};

struct TaskReference {
  std::vector<ReferenceMutation> mutations;  // applied in order to a fresh world
  ResultKind result_kind = ResultKind::exact;
  std::string value;   // expected RESULT value (number/exact)
  int tool_calls = 0;  // calls in the reference solution
};

const TaskReference& agent_task_reference(std::string_view task_id);
// The state the task must end in: the reference mutations applied to a fresh world.
WorldState expected_final_state(std::string_view task_id);

}  // namespace k3lab::validate
