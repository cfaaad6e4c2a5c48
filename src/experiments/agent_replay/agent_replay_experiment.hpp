#pragma once
// agent-replay (seed experiment two): does complete message replay with exact tool-result correlation
// beat histories with one deliberate protocol fault? Planning (schema, the frozen run ledger of 24
// tasks x 7 arms x 3 repetitions, plan bounds, the per-arm window rule) and the runner: each unit is
// one agent run (agent_run.hpp) against the endpoint endpoint_choice.hpp picks, by default the
// embedded mock server with the scripted agent model (k3lab/mock/agent_model.hpp).
#include <functional>
#include <memory>

#include "k3lab/mock/agent_model.hpp"
#include "agent_replay/agent_run.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

// Seams for tests and embedding; the defaults are what `k3lab run` uses.
struct RunHooks {
  std::shared_ptr<api::Clock> clock;  // client waits (Retry-After) and the test window
  api::FaultPlan embedded_faults;     // faults the embedded mock injects (none by default)
  mock::AgentMockOptions embedded_model;    // the embedded mock's assumptions
  // Wraps the embedded mock's model, e.g. to observe what it sends; none by default.
  std::function<api::MockModel(api::MockModel)> wrap_embedded_model;
};

class AgentReplayExperiment : public Experiment {
 public:
  explicit AgentReplayExperiment(RunHooks hooks = {});
  ~AgentReplayExperiment() override;

  std::string id() const override { return "agent-replay"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  std::unique_ptr<WindowRule> window_rule(const core::Protocol& protocol,
                                          const nlohmann::json& parameters) const override;
  // "simulated endpoint: not evidence about Kimi K3" for the embedded mock (see endpoint_choice.hpp).
  std::vector<std::string> run_labels(const nlohmann::json& options) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;

 private:
  // Starts the endpoint (the embedded mock when chosen), the client and the runner on first use.
  AgentRunner& runner(RunEnv& env, const Unit& first_unit);

  RunHooks hooks_;
  std::unique_ptr<api::MockServer> embedded_;  // lives as long as the run (this object)
  std::unique_ptr<AgentRunner> runner_;
};

// The module's one factory (the registry's row for it).
std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::agent_replay
