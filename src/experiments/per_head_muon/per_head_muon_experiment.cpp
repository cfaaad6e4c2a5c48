#include "per_head_muon/per_head_muon_experiment.hpp"

#include <stdexcept>

#include "per_head_muon/parameters.hpp"
#include "per_head_muon/plan.hpp"
#include "per_head_muon/summary.hpp"
#include "per_head_muon/units.hpp"
#include "k3lab/experiments/per_head_muon.hpp"

namespace k3lab::experiments {
namespace per_head_muon {

const core::Schema& PerHeadMuonExperiment::parameter_schema() const { return per_head_muon::parameter_schema(); }

std::vector<Unit> PerHeadMuonExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json PerHeadMuonExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return per_head_muon::plan_details(parse_parameters(parameters), units);
}

UnitOutcome PerHeadMuonExperiment::run_unit(const Unit&, RunEnv&) {
  throw std::logic_error("per-head-muon: runner not built yet");
}

void PerHeadMuonExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
}

}  // namespace per_head_muon

std::unique_ptr<Experiment> make_per_head_muon_experiment() { return std::make_unique<per_head_muon::PerHeadMuonExperiment>(); }

}  // namespace k3lab::experiments
