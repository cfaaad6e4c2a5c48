#pragma once
// context-probe (seed experiment one): does the Kimi K3 API keep validator pass rate as the request
// budget grows toward the configured 1,048,576 tokens? Planning (parameter schema, the frozen call
// ledger, estimates, the window rules) and the runner: each unit is one chat call (a priming call or
// a scored cell, see cell_runner.hpp) against the endpoint endpoint_choice.hpp picks, the embedded
// mock server by default.
#include <memory>

#include "context_probe/cell_runner.hpp"
#include "k3lab/api/clock.hpp"
#include "k3lab/api/mock_server.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/validate/context_reader.hpp"

namespace k3lab::experiments::context_probe {

// Seams for tests and embedding; the defaults are what `k3lab run` uses.
struct RunHooks {
  std::shared_ptr<api::Clock> clock;       // client waits (Retry-After, backoff) and the test window
  api::FaultPlan embedded_faults;          // faults the embedded mock injects (none by default)
  validate::ReaderConfig embedded_reader;  // the embedded mock's reader (seeded recall loss)
};

class ContextProbeExperiment : public Experiment {
 public:
  explicit ContextProbeExperiment(RunHooks hooks = {});
  ~ContextProbeExperiment() override;

  std::string id() const override { return "context-probe"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  // The repository family's pinned repository is installed and matches its pin (before any call).
  std::optional<std::string> preflight(const nlohmann::json& parameters, const nlohmann::json& options) const override;
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  // spec: {family, fixture, length, prefix_id}, as in a unit's spec.
  std::optional<nlohmann::json> describe_fixture(const nlohmann::json& parameters, const nlohmann::json& spec,
                                                 bool include_prompt) const override;
  std::unique_ptr<WindowRule> window_rule(const core::Protocol& protocol,
                                          const nlohmann::json& parameters) const override;
  // "simulated endpoint: not evidence about Kimi K3" for the embedded mock (see endpoint_choice.hpp).
  std::vector<std::string> run_labels(const nlohmann::json& options) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;

 private:
  // Starts the endpoint (the embedded mock when chosen), the client and the cell runner on first use.
  CellRunner& cells(const RunEnv& env);

  RunHooks hooks_;
  std::unique_ptr<api::MockServer> embedded_;  // lives as long as the run (this object)
  std::unique_ptr<CellRunner> cells_;
};

// The module's one factory (the registry's row for it).
std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::context_probe
