#pragma once
// What the agent-replay page is built from: the terminal records of a run, digested per arm and per
// task (ledger only, nothing live).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent_replay/parameters.hpp"
#include "agent_replay/pass_hat_k.hpp"

namespace k3lab::experiments::agent_replay {

struct ArmDigest {
  std::string arm;
  std::size_t planned = 0;
  std::size_t results = 0, invalid = 0, failures = 0;
  std::size_t successes = 0;          // of results
  std::size_t fault_applied = 0;      // runs (any terminal kind with data) where the fault took effect
  std::map<std::string, std::size_t> stops;  // answered | turn_limit | api_error (results)
  std::int64_t duplicate_mutations = 0;      // results
  std::size_t runs_with_duplicates = 0;
  std::int64_t unexpected_tool_names = 0;
  std::int64_t unmatched_tool_calls = 0;
  std::int64_t model_turns = 0;
  std::int64_t finish_length = 0;            // turns cut by the output limit
  // Over every record with call data (invalid runs spent tokens too):
  std::int64_t transport_retries = 0, overload_retries = 0;
  std::map<std::string, std::size_t> error_classes;
  std::int64_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  std::int64_t prompt_after_turn_1 = 0, cached_after_turn_1 = 0;
  double cost_usd = 0;
  // Successful calls whose response reported no usage: their tokens and cost are unknown.
  std::size_t usage_missing_calls = 0;
  // Distinct API error messages seen (HTTP status, class, message) -> runs.
  std::map<std::string, std::size_t> error_messages;
  // Per task (by task id): valid runs and successes, for pass^k and the paired comparison.
  std::map<std::string, TaskTally> tasks;
  std::map<std::string, std::int64_t> task_duplicates;  // summed over the task's valid runs

  std::optional<double> cached_ratio() const;
  std::optional<double> cached_ratio_after_turn_1() const;
  std::optional<double> cost_per_completed_task() const;
};

struct RunDigest {
  std::vector<ArmDigest> arms;  // in the protocol's arm order
  std::set<std::string> endpoints;
  std::set<std::string> response_models;
  std::set<std::string> system_fingerprints;
  std::set<std::string> platform_versions;  // "header: value"
  std::size_t simulated_runs = 0;
  std::string first_call_utc, last_call_utc;
  std::string window_stop_reason;  // set when a window record stopped the run
  nlohmann::json assumptions;      // the simulated endpoint's, when a note recorded them

  const ArmDigest* arm(const std::string& id) const;
};

RunDigest digest_run(const Parameters& p, const std::vector<nlohmann::json>& terminal_records,
                     const std::vector<nlohmann::json>& all_records);

// Paired by task: the fault arm's per-task mean minus the control's, over tasks with valid runs in both.
struct PairedComparison {
  std::string arm;
  std::size_t tasks = 0;
  std::optional<double> success_difference, success_low, success_high;
  std::optional<double> duplicate_difference, duplicate_low, duplicate_high;
  bool success_supports = false;    // control higher and the interval excludes zero
  bool duplicates_support = false;  // fault arm higher and the interval excludes zero
};

std::vector<PairedComparison> compare_with_control(const Parameters& p, const RunDigest& d);

}  // namespace k3lab::experiments::agent_replay
