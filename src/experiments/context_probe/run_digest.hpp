#pragma once
// What the context-probe report needs from a run's records, gathered in one pass: per (family,
// budget, stratum) group the validity counts, validator passes, evidence coverage, latencies, tokens
// and cost (priming calls and re-primes are charged to their warm group), plus the provenance the
// seed asks for (response model, request ids, platform version identifiers, the window).
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "context_probe/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

struct GroupKey {
  std::string family;
  std::int64_t length = 0;
  std::string stratum;
  auto operator<=>(const GroupKey&) const = default;
};

struct GroupStats {
  std::size_t planned = 0;   // scored cells in the frozen ledger
  std::size_t results = 0;   // valid measurements
  std::size_t invalid = 0;
  std::size_t failures = 0;
  std::size_t passes = 0;    // valid measurements the validator passed
  std::vector<double> coverage;           // valid measurements
  std::vector<double> ttft_ms;            // valid measurements that streamed a first token
  std::vector<double> latency_ms;         // valid measurements
  std::vector<double> prompt_tokens;      // valid measurements
  std::vector<double> cached_tokens;
  std::vector<double> completion_tokens;
  std::vector<double> prompt_over_planned;  // observed usage.prompt_tokens / planned count
  double cost_usd = 0;       // every call of the group: scored, priming and re-primes, valid or not
  std::size_t calls = 0;
  std::size_t usage_missing = 0;  // answered calls that reported no usage: the group's cost is unknown
};

struct CallTotals {
  std::size_t units = 0;
  std::size_t calls = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_tokens = 0;
  std::int64_t completion_tokens = 0;
  double cost_usd = 0;
  std::size_t usage_missing = 0;  // answered calls that reported no usage: the cost is unknown
};

struct RunDigest {
  std::map<GroupKey, GroupStats> groups;
  std::map<std::string, CallTotals> totals_by_role;  // "cold scored", "warm scored", "priming", "re-priming"
  std::map<std::string, std::size_t> invalid_reasons;   // scored cells: reason -> count
  std::map<std::string, std::size_t> failure_classes;   // every unit: class -> count
  std::set<std::string> endpoints;
  std::set<std::string> response_models;
  std::set<std::string> system_fingerprints;
  std::map<std::string, std::set<std::string>> platform_headers;  // name -> values (mock marker excluded)
  std::size_t calls = 0;
  std::size_t calls_with_request_id = 0;
  std::size_t simulated_calls = 0;
  std::string token_counter;   // name of the counter the budgets used
  std::set<std::string> repositories;  // the repository family's pinned snapshots, one line each
  bool exact_tokenizer = false;
  std::string window_start_utc, window_end_utc;
  std::string first_call_utc, last_call_utc;
  std::vector<std::string> window_stops;  // reasons of the runner's window records
  std::size_t units_planned = 0;
  std::size_t units_finished = 0;
};

RunDigest digest_run(const Parameters& p, const RunRecords& records);

}  // namespace k3lab::experiments::context_probe
