#include "agent_replay/agent_replay_experiment.hpp"

#include <stdexcept>

#include "agent_replay/parameters.hpp"
#include "agent_replay/plan.hpp"
#include "agent_replay/summary.hpp"
#include "agent_replay/units.hpp"
#include "agent_replay/window_rule.hpp"
#include "k3lab/experiments/agent_replay.hpp"

namespace k3lab::experiments {
namespace agent_replay {

const core::Schema& AgentReplayExperiment::parameter_schema() const { return agent_replay::parameter_schema(); }

std::vector<Unit> AgentReplayExperiment::enumerate(const core::Protocol& protocol,
                                                   const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json AgentReplayExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                                   const std::vector<Unit>& units) const {
  return agent_replay::plan_details(parse_parameters(parameters), units);
}

UnitOutcome AgentReplayExperiment::run_unit(const Unit&, RunEnv&) {
  throw std::logic_error("agent-replay: runner not built yet");
}

WindowVerdict AgentReplayExperiment::check_window(const core::Protocol&, const nlohmann::json& parameters,
                                                  const std::vector<nlohmann::json>& terminal_records) const {
  return check_invalid_window(parse_parameters(parameters), terminal_records);
}

void AgentReplayExperiment::summarise(const core::Protocol& protocol, const RunRecords& records,
                                      report::Page& page) const {
  summarise_run(protocol, records, page);
}

}  // namespace agent_replay

std::unique_ptr<Experiment> make_agent_replay_experiment() {
  return std::make_unique<agent_replay::AgentReplayExperiment>();
}

}  // namespace k3lab::experiments
