#pragma once
// Runs one memory-pool unit: a calibration, decision or sensitivity simulation (units.hpp). The trace
// of the previous unit is kept, so that units on one trace (the policies of a decision trace, the
// ratios of a calibration trace, the sensitivity settings of a retained trace) load or generate it once.
// A tuned fixed split reads its mix's calibration results from the run's ledger (selection.hpp) and
// runs any that are missing itself (deterministic: the same data the calibration units record).
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/sim/trace_source.hpp"
#include "memory_pool/selection.hpp"

namespace k3lab::experiments::memory_pool {

// Where relative fixture paths are resolved: the folder above the protocol file's folder (the
// repository root for experiments/memory-pool.json), else the source tree this binary was built from.
std::filesystem::path fixture_root_for(const std::filesystem::path& protocol_file, const std::string& relative_file);

class UnitRunner {
 public:
  UnitOutcome run(const Unit& unit, RunEnv& env);

 private:
  // Loads or generates the unit's trace into cached_ unless it is cached; an outcome on failure.
  std::optional<UnitOutcome> prepare_trace(const Unit& unit, RunEnv& env, const sim::SimParameters& params);
  // The chosen split of `mix` in this run (cached once chosen: calibration results never change);
  // `recomputed` is set to the number of calibration simulations missing from the ledger and run here.
  SplitChoice split_choice(const RunEnv& env, const sim::SimParameters& params, const std::string& mix,
                           std::size_t* recomputed);

  std::string cached_key_;
  std::shared_ptr<const sim::UnitTrace> cached_;
  std::map<std::string, SplitChoice> chosen_splits_;
};

}  // namespace k3lab::experiments::memory_pool
