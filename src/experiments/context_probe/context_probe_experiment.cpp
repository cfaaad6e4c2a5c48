#include "context_probe/context_probe_experiment.hpp"

#include <stdexcept>

#include "context_probe/parameters.hpp"
#include "context_probe/plan.hpp"
#include "context_probe/summary.hpp"
#include "context_probe/units.hpp"
#include "context_probe/window_rule.hpp"
#include "k3lab/experiments/context_probe.hpp"

namespace k3lab::experiments {
namespace context_probe {

const core::Schema& ContextProbeExperiment::parameter_schema() const { return context_probe::parameter_schema(); }

std::vector<Unit> ContextProbeExperiment::enumerate(const core::Protocol& protocol,
                                                    const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json ContextProbeExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                                    const std::vector<Unit>& units) const {
  return context_probe::plan_details(parse_parameters(parameters), units);
}

UnitOutcome ContextProbeExperiment::run_unit(const Unit&, RunEnv&) {
  throw std::logic_error("context-probe: runner not built yet");
}

WindowVerdict ContextProbeExperiment::check_window(const core::Protocol&, const nlohmann::json& parameters,
                                                   const std::vector<nlohmann::json>& terminal_records) const {
  return check_invalid_window(parse_parameters(parameters), terminal_records);
}

void ContextProbeExperiment::summarise(const core::Protocol& protocol, const RunRecords& records,
                                       report::Page& page) const {
  summarise_run(protocol, records, page);
}

}  // namespace context_probe

std::unique_ptr<Experiment> make_context_probe_experiment() {
  return std::make_unique<context_probe::ContextProbeExperiment>();
}

}  // namespace k3lab::experiments
