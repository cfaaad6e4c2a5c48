#pragma once
// router-balance (seed experiment five): no control vs aux loss vs fixed-step bias vs Quantile
// Balancing in a small MoE, five paired seeds. Planning half: schema, the frozen run ledger, plan
// estimates and a record-count summary. The runner (MoE model, controls, load metrics) extends it.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::router_balance {

class RouterBalanceExperiment : public Experiment {
 public:
  std::string id() const override { return "router-balance"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::router_balance
