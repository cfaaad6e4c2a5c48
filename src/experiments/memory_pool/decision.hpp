#pragma once
// The memory-pool decision: unified against fixed split, paired over the seeded traces.
// Protocol v2's co-primary rule on one mix, from the two paired 95% t intervals: d_admit = unified -
// fixed admitted-by-last-arrival, d_delay = fixed - unified mean queue delay (both positive when the
// unified arm is better).
//   supported:  at least one interval lies above zero and neither lies below zero;
//   refuted:    at least one lies below zero and neither lies above zero;
//   trade-off:  one lies above and the other below (unresolved);
//   unresolved: both contain zero.
// The decision table: protocol v1 (an explicit fixed ratio) decides on admitted by the last arrival
// alone; protocol v2 (a tuned split) uses the co-primary rule, admissions beside mean queue delay.
#include <map>
#include <string>
#include <vector>

#include "k3lab/report/page.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/mean_interval.hpp"
#include "memory_pool/run_results.hpp"
#include "memory_pool/selection.hpp"

namespace k3lab::experiments::memory_pool {

enum class CoPrimaryVerdict { NotEnoughPairs, Supported, Refuted, TradeOff, Unresolved };

CoPrimaryVerdict co_primary_verdict(const MeanInterval& admit, const MeanInterval& delay);
// "supported", "refuted", "unresolved (trade-off: ...)", "unresolved", "not enough seeded traces".
std::string verdict_text(CoPrimaryVerdict verdict);

struct CoPrimaryDecision {
  MeanInterval admit;  // d_admit, paired
  MeanInterval delay;  // d_delay, paired, seconds
  CoPrimaryVerdict verdict = CoPrimaryVerdict::NotEnoughPairs;
};

// From per-trace pairs (same length, same trace order).
CoPrimaryDecision decide(const std::vector<double>& admit_differences, const std::vector<double>& delay_differences);

struct DecisionArms {
  std::string fixed;  // policy ids
  std::string unified;
};

report::Table admission_decision_table(const sim::SimParameters& params, const RunResults& results,
                                       const DecisionArms& arms, bool smoke);
report::Table co_primary_decision_table(const sim::SimParameters& params, const RunResults& results,
                                        const DecisionArms& arms, const std::map<std::string, SplitChoice>& splits,
                                        bool smoke);

}  // namespace k3lab::experiments::memory_pool
