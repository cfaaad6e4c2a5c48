#pragma once
// Runs one context-probe unit (a priming call or a scored cell) against an endpoint and decides its
// terminal outcome. The generic runner calls it once per unit, in the frozen order (cold, prime,
// warm per block), and records what it returns.
//
// Outcomes of a scored cell:
//   result   the call succeeded and its stratum's cache condition held (cold: cached_tokens == 0;
//            warm: cached_tokens > 0); data.verdict holds the validator's verdict.
//   invalid  window-expired (not sent, or finished after the window closed), cold-cache-hit,
//            warm-cache-miss, usage-missing, over-budget-observed, priming-failed (not sent).
//   failure  the call failed after the client's retries (class = api::ErrorClass, e.g. transport,
//            rate_limit, auth), or budget-exceeded before sending.
// A priming call is a result when its call succeeded (its tokens and cost count), else a failure.
//
// A warm cell must follow its own priming call directly. When it does not (a resumed run whose
// priming call ran in an earlier process, or a --unit/--shard subset), the priming request is sent
// again first and kept under data.reprime with its tokens and cost.
//
// data (deterministic) and timing (wall clock) of every unit:
//   data.prefix_id, data.fixture (ground truth summary), data.budget, data.token_counter,
//   data.call (the CallRecord without its clock fields; its call_index is the unit's position in the
//   frozen plan, and a repeated priming call carries its priming unit's), data.observed, data.cost_usd,
//   data.content (the reply text; reasoning is never kept, only data.call's presence/count/hash),
//   data.verdict (scored cells; priming calls carry it as unscored_verdict);
//   timing.window_start_utc/window_end_utc, timing.call (started/finished UTC, ttft/latency/wall/
//   waited ms, endpoint URL).
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/api/endpoint_choice.hpp"
#include "context_probe/parameters.hpp"
#include "context_probe/prompt_tokens.hpp"
#include "k3lab/api/test_window.hpp"
#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

struct CellPrompt;

struct CellRunnerSetup {
  Parameters parameters;
  std::shared_ptr<const api::ChatClient> client;
  PromptTokenCounter counter;
  api::EndpointChoice endpoint;
  // Salts every prefix id (cell_prompt.hpp). Empty for the embedded mock, whose cache is born empty
  // with the run, which keeps its ledgers reproducible.
  std::string window_id;
  api::TestWindow window;
  std::shared_ptr<api::Clock> clock;  // decides whether a unit is inside the window
};

// The clock fields of a CallRecord go to timing, the rest to data (endpoint shown by record_name).
struct SplitCallRecord {
  nlohmann::json data;
  nlohmann::json timing;
};
SplitCallRecord split_call_record(const api::CallRecord& record, const api::EndpointChoice& endpoint);

class CellRunner {
 public:
  // earlier_outcomes: unit id -> terminal kind ("result", "invalid", "failure") of units finished
  // before this process started (resume).
  CellRunner(CellRunnerSetup setup, std::map<std::string, std::string> earlier_outcomes = {});

  UnitOutcome run(const Unit& unit);

  const CellRunnerSetup& setup() const { return setup_; }

 private:
  UnitOutcome run_unit(const Unit& unit);
  // A warm cell must follow its own priming call: sends the priming request again when it did not;
  // returns the cell's outcome when the cell cannot be sent.
  std::optional<UnitOutcome> ensure_primed(const nlohmann::json& spec, const CellPrompt& cell, nlohmann::json& data,
                                           nlohmann::json& timing);
  // The outcome of a scored cell whose call succeeded: its stratum's cache condition, the observed
  // budget and the window's end.
  UnitOutcome scored_outcome(const std::string& stratum, std::int64_t length, const api::CallRecord& r,
                             const std::string& window_text, nlohmann::json data, nlohmann::json timing) const;
  // Sends `request` as the call of the unit `unit_id` (its call index is that unit's plan position).
  api::ChatResult call(const nlohmann::json& request, const std::string& unit_id);

  CellRunnerSetup setup_;
  std::map<std::string, std::string> outcomes_;
  std::string last_call_unit_;  // the unit whose call this process sent last
  std::string last_call_sha256_;  // of that call's request body
  // unit id -> position in the frozen plan: the index of its call, the same in every process, so a
  // resumed run numbers its calls as an uninterrupted one does.
  std::map<std::string, std::size_t> plan_position_;
};

}  // namespace k3lab::experiments::context_probe
