#pragma once
// context-probe (seed experiment one): does the Kimi K3 API keep validator pass rate as the request
// budget grows toward the configured 1,048,576 tokens? This class is the planning half: parameter
// schema, the frozen call ledger, plan estimates, the window rule and a record-count summary. The
// runner (fixture generation, calls, validation) extends it by overriding has_runner and run_unit.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::context_probe {

class ContextProbeExperiment : public Experiment {
 public:
  std::string id() const override { return "context-probe"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  WindowVerdict check_window(const core::Protocol& protocol, const nlohmann::json& parameters,
                             const std::vector<nlohmann::json>& terminal_records) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::context_probe
