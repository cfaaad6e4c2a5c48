#pragma once
// agent-replay (seed experiment two): does complete message replay with exact tool-result correlation
// beat histories with one deliberate protocol fault? Planning half: schema, the frozen run ledger,
// plan bounds, the per-arm window rule and a record-count summary. The runner (local tools, fault
// injection, validators) extends it by overriding has_runner and run_unit.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

class AgentReplayExperiment : public Experiment {
 public:
  std::string id() const override { return "agent-replay"; }
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

}  // namespace k3lab::experiments::agent_replay
