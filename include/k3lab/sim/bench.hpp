#pragma once
// `k3lab bench memory-pool`: simulates one full trace of the protocol under each policy on one
// core and prints one line per policy, then, as its LAST line,
//   arrivals_per_second_per_core: <integer>
// (all arrivals simulated / CPU seconds of the simulating thread, so a busy machine does not skew
// it; wall seconds are printed per policy; trace generation is timed apart).
//
// Options (every key optional; unknown keys are errors):
//   parameters  resolved memory-pool parameters (default: the protocol file's, for `profile`)
//   protocol    path of experiments/memory-pool.json (default: core::protocol_path("memory-pool"))
//   profile     "full" (default) or "smoke"
//   mix         mix id (default: the protocol's last mix, the short-to-long shift)
//   trace       seeded trace index, 1..seeded_traces_per_mix (default 1)
//   csv, csv_format   simulate an imported CSV trace instead ("burstgpt" or "azure")
#include <ostream>

#include <nlohmann/json.hpp>

namespace k3lab::sim {

int run_memory_pool_bench(const nlohmann::json& options, std::ostream& out);

}  // namespace k3lab::sim
