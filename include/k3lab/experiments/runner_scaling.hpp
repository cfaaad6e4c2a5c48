#pragma once
// The runner's per-unit bookkeeping at scale (issue 19): a built-in module whose units do nothing runs
// through run_experiment, so everything measured is the runner's own work per unit (attempt and terminal
// records, the unit's lease, the window rule, progress). `k3lab bench runner` prints it; a test asserts
// on its counts.
#include <cstddef>
#include <filesystem>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::experiments {

struct RunnerScalingOptions {
  std::size_t units = 20000;
  std::size_t block = 1000;             // units per reported block
  std::filesystem::path folder;         // where the run dir goes (it must exist)
};

struct RunnerScalingBlock {
  std::vector<double> unit_seconds;     // per unit: from its start to the next unit's start
  std::size_t window_records_fed = 0;   // terminal records the window rules were given during the block
};

struct RunnerScaling {
  std::size_t units_run = 0;
  int exit_code = 0;
  std::vector<RunnerScalingBlock> blocks;
};

RunnerScaling measure_runner_scaling(const RunnerScalingOptions& options);

// `k3lab bench runner [--opt units=N] [--opt block=N]`: a table of blocks (median and max of the
// per-unit time within each, records fed to the window rule) in a temporary folder it removes.
int run_runner_bench(const nlohmann::json& options, std::ostream& out);

}  // namespace k3lab::experiments
