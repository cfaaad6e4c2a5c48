#pragma once
// What each arm does to an otherwise documented agent run. The control replays complete assistant
// messages (content, reasoning_content, tool_calls) and answers every tool_call_id with one tool
// message; each fault arm changes exactly one thing:
//   content-only          replayed assistant messages keep only role and content
//   effort-change         from faults.effort_change.from_turn the request sends to_effort
//   omitted-tool-result   at the first turn with two or more tool calls, one result is not appended
//   truncated-completion  turn faults.truncated_completion.turn is sent with the low output cap
//   no-idempotency-key    the run's first mutating call is dispatched twice, both times without a key
//   reordered-tools       from faults.reordered_tools.from_turn the tools array is sent reversed
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"

namespace k3lab::experiments::agent_replay {

enum class Arm {
  control,
  content_only,
  effort_change,
  omitted_tool_result,
  truncated_completion,
  no_idempotency_key,
  reordered_tools
};

// Throws std::invalid_argument naming the valid ids.
Arm arm_from_id(const std::string& id);
std::string arm_id(Arm arm);

// The world's tools in their declared order, and the fixed different order the reordered-tools arm
// sends (reversed: the serialized request differs from its first byte).
nlohmann::json declared_tools();
nlohmann::json reordered_tools();

class ArmFaults {
 public:
  ArmFaults(Arm arm, const Parameters& parameters);

  Arm arm() const { return arm_; }
  // Request settings of model turn `turn` (1-based).
  std::string effort_at(int turn) const;
  std::int64_t max_completion_tokens_at(int turn) const;
  bool tools_reordered_at(int turn) const;
  const nlohmann::json& tools_at(int turn) const;
  // The assistant message as this arm replays it in later requests (the input is the complete
  // message, reasoning_content included when the model sent one).
  nlohmann::json replayed(const nlohmann::json& assistant) const;
  // Which tool result of a turn with `call_count` calls is left out, when this arm omits one there;
  // `omitted_before`: whether the run already omitted one (only the first such turn is faulted).
  std::optional<std::size_t> omitted_result(std::size_t call_count, bool omitted_before) const;
  // Whether the run's first mutating call is dispatched twice without an idempotency key.
  bool duplicates_first_mutation() const { return arm_ == Arm::no_idempotency_key; }
  // Whether this arm's request at `turn` differs from the control's request settings.
  bool request_fault_at(int turn) const;

 private:
  Arm arm_;
  Parameters p_;
  nlohmann::json declared_;
  nlohmann::json reordered_;
};

}  // namespace k3lab::experiments::agent_replay
