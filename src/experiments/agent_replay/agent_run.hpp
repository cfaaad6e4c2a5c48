#pragma once
// One agent-replay run (one unit: task x arm x repetition) against a chat endpoint.
//
// The loop: send the conversation with the declared tools; execute every returned tool call against
// a fresh validate::World (deterministic local tools, reset for every run so no fault leaks into
// another task) and append one tool message per tool_call_id; stop after max_model_turns model turns
// or the first terminal answer (a reply without tool calls that was not cut by the output limit),
// then run the task's hidden validator on the answer and the world state. The arm's one fault is
// applied by ArmFaults.
//
// Every step goes to the run's operation record (operation_record.hpp) before the run acts on it. A
// platform failure (api::is_retryable: transport, server, rate limit, overload) is resent under the
// shared api::RetryPolicy (setup.retry: at most 1 + parameters.transport_retries sends of a model turn
// in all, after backoff with jitter or the server's Retry-After); each resend reopens the record and
// continues from what it says, so a dispatched tool call is never dispatched again. A stop request
// (SIGINT/SIGTERM) during a call or a wait throws api::CallInterrupted and leaves the unit open. The run keeps raw reasoning in memory only; a run whose process ended mid-run
// therefore cannot replay exactly, so resuming such a unit moves its old record aside
// (<name>.abandoned-<n>.jsonl, still counted for cost) and starts the run again against a reset world.
//
// Outcomes: result (answered, turn limit, or an API rejection such as the 400 a fault provokes: the
// seed counts those as outcomes of the arm), invalid (transport retries exhausted, outside the test
// window, harness inconsistency) or failure (auth, quota, not-found: the window cannot go on).
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"
#include "k3lab/api/test_window.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/api/retry_policy.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

struct AgentRunSetup {
  Parameters parameters;
  // Built with retry.max_sends = 1: resends are the run's own (resumed from the record).
  std::shared_ptr<const api::ChatClient> client;
  api::RetryPolicy retry;                      // the protocol's cap: RetryPolicy::with_retries(transport_retries)
  const std::atomic<bool>* stop = nullptr;     // the runner's stop flag
  std::string request_model;                   // the served name requests carry; empty: parameters.model
  std::shared_ptr<api::Clock> clock;
  std::string endpoint_name;  // what records show: a base URL or "embedded-mock"
  api::TestWindow window;
};

// The record's file name for a unit id ("task=3/arm=control/rep=1" -> "task-3_arm-control_rep-1.jsonl").
std::string operation_record_name(const std::string& unit_id);
// artifacts/agent-replay/<name>.
std::filesystem::path operation_record_path(const std::filesystem::path& artifacts_dir, const std::string& unit_id);

// The idempotency key the harness gives a mutating call whose arguments carry none: derived from the
// unit and the tool_call_id, so the same call always gets the same key.
std::string harness_idempotency_key(const std::string& unit_id, const std::string& tool_call_id);

class AgentRunner {
 public:
  // Throws std::invalid_argument when the client was built with its own transport retries.
  explicit AgentRunner(AgentRunSetup setup);

  // Runs (or restarts, see above) one unit. `artifacts_dir` is the run dir's artifacts folder.
  UnitOutcome run(const Unit& unit, const std::filesystem::path& artifacts_dir);

  const AgentRunSetup& setup() const { return setup_; }

 private:
  AgentRunSetup setup_;
};

}  // namespace k3lab::experiments::agent_replay
