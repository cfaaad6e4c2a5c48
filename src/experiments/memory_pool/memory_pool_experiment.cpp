#include "memory_pool/memory_pool_experiment.hpp"

#include "k3lab/sim/parameters.hpp"
#include "memory_pool/plan.hpp"
#include "memory_pool/summary.hpp"
#include "memory_pool/units.hpp"

namespace k3lab::experiments {
namespace memory_pool {

const core::Schema& MemoryPoolExperiment::parameter_schema() const { return sim::parameter_schema(); }

std::vector<Unit> MemoryPoolExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  const sim::SimParameters params = sim::parse_parameters(parameters);
  require_arms_match_policies(protocol.arms, params);
  return enumerate_units(params);
}

nlohmann::json MemoryPoolExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                                  const std::vector<Unit>& units) const {
  return memory_pool::plan_details(sim::parse_parameters(parameters), units);
}

UnitOutcome MemoryPoolExperiment::run_unit(const Unit& unit, RunEnv& env) { return runner_.run(unit, env); }

std::vector<std::string> MemoryPoolExperiment::run_labels(const nlohmann::json&) const {
  return {"systems simulation: simulated memory policies, not device measurements"};
}

void MemoryPoolExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
}

std::unique_ptr<Experiment> make_experiment() { return std::make_unique<MemoryPoolExperiment>(); }

}  // namespace memory_pool

}  // namespace k3lab::experiments
