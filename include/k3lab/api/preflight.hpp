#pragma once
// The pre-flight of a direct-API endpoint (`k3lab check-endpoint <id>`): what the experiments need
// from it, checked with a handful of short calls before a window is opened, each missing capability
// reported with its fix. Nothing here touches a run directory.
//
//   models      GET {base}/models lists the model the run will request (protocol id or served name)
//   usage       a short streamed call reports usage (prompt/completion tokens)
//   cache       (context-probe) the same long prompt sent twice: the second reports cached_tokens > 0
//   tool-call   (agent-replay) a declared tool is called, and the answer after its result comes back
// The first call's round trip is measured and reported, and so is the price table's age (from its
// as_of date and today's date); a table older than kStalePriceTableDays adds a warning naming the file
// and field to update. Warnings never fail the pre-flight.
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_client.hpp"
#include "k3lab/api/clock.hpp"

namespace k3lab::api {

struct PreflightOptions {
  std::string model;              // what requests carry
  std::string reasoning_effort;   // empty: not sent
  bool need_cache_hit = false;    // context-probe's warm stratum
  bool need_tool_call = false;    // agent-replay
  std::int64_t max_completion_tokens = 1024;  // room for a reasoning model to answer
  // The tool round trip: the tools declared, the conversation that should make the model call one,
  // and the result each call gets. Empty / unset: one built-in order-status lookup. agent-replay's
  // CLI passes its own world tools and a frozen task, so the probe is what a run will send.
  nlohmann::json probe_tools;
  nlohmann::json probe_messages;
  std::function<std::string(const ToolCall& call)> answer_tool;
  // The protocol's parameters.pricing.as_of and the file it is written in (for the warning's fix).
  std::string price_table_as_of;
  std::string price_table_file;
  std::shared_ptr<Clock> clock = system_clock();  // today's date, for the price table's age
};

inline constexpr std::int64_t kStalePriceTableDays = 90;

// Whole days from the date `as_of` starts with (YYYY-MM-DD) to the UTC day of `now`; nullopt when
// as_of does not start with a valid date.
std::optional<std::int64_t> days_since(const std::string& as_of, std::chrono::system_clock::time_point now);

struct PreflightCheck {
  std::string name;
  bool ok = false;
  std::string detail;
  std::string fix;  // empty when ok
};

struct PreflightReport {
  std::string model;             // what the probes requested
  std::string price_table_as_of;  // the protocol's price table date, as written there (free text)
  std::optional<std::int64_t> price_table_age_days;  // nullopt: as_of is not a YYYY-MM-DD date
  std::vector<std::string> warnings;                 // do not fail the pre-flight
  std::vector<PreflightCheck> checks;
  double round_trip_ms = 0;
  std::int64_t calls = 0, prompt_tokens = 0, completion_tokens = 0;

  bool ok() const;
  nlohmann::json to_json() const;
  std::string text() const;  // one line per check, fixes indented under failures, then warnings
};

PreflightReport run_preflight(const ChatClient& client, const PreflightOptions& options);

}  // namespace k3lab::api
