#pragma once
// The page's "tuned fixed split" section (protocol v2): per mix, the ratio the predeclared sweep chose
// on the pre-shift calibration traces, and every candidate's admitted-by-last-arrival and queue delay.
#include <map>
#include <string>

#include "k3lab/report/page.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/run_results.hpp"
#include "memory_pool/selection.hpp"

namespace k3lab::experiments::memory_pool {

// The choice of every mix from the run's calibration records (requires params.fixed_split_tuning).
std::map<std::string, SplitChoice> split_choices(const sim::SimParameters& params, const RunResults& results);

void add_tuned_split_section(const sim::SimParameters& params, const std::map<std::string, SplitChoice>& splits,
                             report::Page& page);

}  // namespace k3lab::experiments::memory_pool
