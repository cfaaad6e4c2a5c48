#pragma once
// Runs one (mix, trace, policy) simulation. The trace of the previous unit is kept, so that the
// three policies of one trace load or generate it once.
#include <filesystem>
#include <memory>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/sim/trace_source.hpp"

namespace k3lab::experiments::memory_pool {

// Where relative fixture paths are resolved: the folder above the protocol file's folder (the
// repository root for experiments/memory-pool.json), else the source tree this binary was built from.
std::filesystem::path fixture_root_for(const std::filesystem::path& protocol_file, const std::string& relative_file);

class UnitRunner {
 public:
  UnitOutcome run(const Unit& unit, RunEnv& env);

 private:
  std::string cached_key_;
  std::shared_ptr<const sim::UnitTrace> cached_;
};

}  // namespace k3lab::experiments::memory_pool
