#pragma once
// The page's sensitivity sections (protocol v2), all on each mix's retained trace:
//   ratio sensitivity: the fixed split at every candidate ratio (admitted by the last arrival and mean
//   queue delay vs ratio), the unified arm's value as a reference series;
//   compaction sensitivity: the unified arm at every copy bandwidth (admitted by the last arrival vs
//   bandwidth, log x), the tuned fixed split as the reference, and the highest bandwidth at which the
//   unified arm's admission gain over the tuned split is gone.
#include <optional>
#include <string>

#include "k3lab/report/page.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/decision.hpp"
#include "memory_pool/run_results.hpp"

namespace k3lab::experiments::memory_pool {

void add_ratio_sensitivity(const sim::SimParameters& params, const RunResults& results, const DecisionArms& arms,
                           report::Page& page);
void add_compaction_sensitivity(const sim::SimParameters& params, const RunResults& results, const DecisionArms& arms,
                                report::Page& page);

// The highest bandwidth whose admission gain (unified - reference, admitted by the last arrival) is at
// most zero; nullopt when the gain stays positive at every bandwidth. `points` are (bytes/s, gain).
std::optional<double> highest_bandwidth_without_gain(const std::vector<std::pair<double, double>>& points);

}  // namespace k3lab::experiments::memory_pool
