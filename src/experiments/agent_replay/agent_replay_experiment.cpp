#include "agent_replay/agent_replay_experiment.hpp"

#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/api/transport_options.hpp"
#include "agent_replay/parameters.hpp"
#include "agent_replay/plan.hpp"
#include "agent_replay/summary.hpp"
#include "agent_replay/units.hpp"
#include "agent_replay/window_rule.hpp"
#include "k3lab/core/ledger.hpp"

namespace k3lab::experiments {
namespace agent_replay {

AgentReplayExperiment::AgentReplayExperiment(RunHooks hooks) : hooks_(std::move(hooks)) {
  if (!hooks_.clock) hooks_.clock = api::system_clock();
}

AgentReplayExperiment::~AgentReplayExperiment() {
  runner_.reset();
  if (embedded_) embedded_->stop();
}

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

AgentRunner& AgentReplayExperiment::runner(RunEnv& env, const Unit& first_unit) {
  if (runner_) return *runner_;
  AgentRunSetup setup;
  setup.parameters = parse_parameters(env.parameters);
  setup.clock = hooks_.clock;
  const api::EndpointChoice endpoint = api::choose_endpoint(env.options, "agent-replay");
  setup.endpoint_name = endpoint.record_name();

  setup.retry = api::RetryPolicy::with_retries(setup.parameters.transport_retries);
  setup.stop = env.stop_requested;
  setup.request_model = api::request_model(env.options, setup.parameters.model);

  api::ClientConfig config;
  config.retry.max_sends = 1;  // the run resends failed turns itself (setup.retry), from its operation record
  config.max_in_flight = 1;    // one agent run at a time, units in ledger order
  config.stop = env.stop_requested;
  api::apply_transport_options(env.parameters, env.options, config);
  if (endpoint.embedded()) {
    api::MockServerOptions options;
    options.models = {setup.request_model};
    options.model = mock::agent_mock_model(hooks_.embedded_model);
    if (hooks_.wrap_embedded_model) options.model = hooks_.wrap_embedded_model(options.model);
    options.faults = hooks_.embedded_faults;
    options.strict_tool_messages = hooks_.embedded_model.strict_tool_messages;
    embedded_ = api::start_embedded_mock(std::move(options), "agent-replay");
    config.base_url = embedded_->base_url();
    // Once per process: what the simulated endpoint assumes where the documentation is silent.
    env.note(first_unit.id, {{"kind", "note"},
                             {"note", "simulated-endpoint-assumptions"},
                             {"label", api::kSimulatedLabel},
                             {"assumptions", mock::agent_mock_assumptions(hooks_.embedded_model)}});
  } else {
    config.base_url = endpoint.base_url;
  }
  setup.client = std::make_shared<const api::ChatClient>(config, hooks_.clock);
  setup.window =
      api::open_test_window(core::read_ledger(env.run_dir), setup.parameters.test_window_hours, hooks_.clock->utc_now());
  runner_ = std::make_unique<AgentRunner>(std::move(setup));
  return *runner_;
}

UnitOutcome AgentReplayExperiment::run_unit(const Unit& unit, RunEnv& env) {
  AgentRunner& agent = runner(env, unit);
  // Each run meets a mock that has seen nothing before it (no cached prefix, no earlier arrival, ids
  // of its own), so a unit is answered alike whether or not earlier units ran in this process: a
  // resumed run equals an uninterrupted one.
  if (embedded_) embedded_->begin_session(unit.id);
  return agent.run(unit, env.artifacts_dir);
}

std::unique_ptr<WindowRule> AgentReplayExperiment::window_rule(const core::Protocol&, const nlohmann::json& parameters) const {
  return invalid_window_rule(parse_parameters(parameters));
}

std::vector<std::string> AgentReplayExperiment::run_labels(const nlohmann::json& options) const {
  return api::endpoint_labels(api::choose_endpoint(options, "agent-replay"));
}

void AgentReplayExperiment::summarise(const core::Protocol& protocol, const RunRecords& records,
                                      report::Page& page) const {
  summarise_run(protocol, records, page);
}

std::unique_ptr<Experiment> make_experiment() { return std::make_unique<AgentReplayExperiment>(); }

}  // namespace agent_replay

}  // namespace k3lab::experiments
