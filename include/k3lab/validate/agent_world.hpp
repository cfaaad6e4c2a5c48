#pragma once
// The resettable agent-replay world: state + tool dispatch + idempotency store + mutation log.
//
// Every tool answers with a JSON object. Errors are {"error":{"type":..., "message":...}} with types
// unknown_tool, invalid_arguments, not_found (both rejected before execution), insufficient_funds,
// out_of_stock, already_cancelled (business-rule failures of an executed mutation), and
// idempotency_key_reuse. Tool results are deterministic: the same calls on a reset world give the same
// bytes.
#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "k3lab/validate/idempotency_store.hpp"
#include "k3lab/validate/mutation_log.hpp"
#include "k3lab/validate/world_state.hpp"

namespace k3lab::validate {

struct ToolOutcome {
  nlohmann::json result;  // the tool message content (see content())
  bool is_error = false;
  bool mutating = false;  // the tool is a mutating tool
  bool executed = false;  // a mutation ran (false for reads, replays and rejected calls)
  bool replayed = false;  // served from the idempotency store

  std::string content() const { return result.dump(); }
};

class World {
 public:
  World() : state_(initial_world_state()) {}

  // Restores the initial state and clears the idempotency store and the mutation log.
  void reset();

  ToolOutcome call(std::string_view tool, const nlohmann::json& arguments);
  // `arguments_json` as found in a tool call ("arguments" is a JSON string); a parse error is an
  // invalid_arguments error result, not an exception.
  ToolOutcome call_with_arguments_text(std::string_view tool, std::string_view arguments_json);

  const WorldState& state() const { return state_; }
  nlohmann::json state_json() const { return world_state_json(state_); }
  const MutationLog& mutation_log() const { return log_; }
  const IdempotencyStore& idempotency_store() const { return keys_; }
  std::size_t duplicate_mutations() const { return count_duplicate_mutations(log_); }

 private:
  enum class Failure { none, rejected, business };
  nlohmann::json execute(std::string_view tool, const nlohmann::json& arguments, Failure& failure);

  WorldState state_;
  IdempotencyStore keys_;
  MutationLog log_;
};

}  // namespace k3lab::validate
