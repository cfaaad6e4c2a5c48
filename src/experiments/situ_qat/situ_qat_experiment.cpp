#include "situ_qat/situ_qat_experiment.hpp"

#include <stdexcept>

#include "situ_qat/parameters.hpp"
#include "situ_qat/plan.hpp"
#include "situ_qat/summary.hpp"
#include "situ_qat/units.hpp"
#include "k3lab/experiments/situ_qat.hpp"

namespace k3lab::experiments {
namespace situ_qat {

const core::Schema& SituQatExperiment::parameter_schema() const { return situ_qat::parameter_schema(); }

std::vector<Unit> SituQatExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json SituQatExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return situ_qat::plan_details(parse_parameters(parameters), units);
}

UnitOutcome SituQatExperiment::run_unit(const Unit&, RunEnv&) {
  throw std::logic_error("situ-qat: runner not built yet");
}

void SituQatExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
}

}  // namespace situ_qat

std::unique_ptr<Experiment> make_situ_qat_experiment() { return std::make_unique<situ_qat::SituQatExperiment>(); }

}  // namespace k3lab::experiments
