#pragma once
// router-balance (seed experiment five): no control vs aux loss vs fixed-step bias vs Quantile
// Balancing in a small MoE, five paired seeds. Planning: schema, the frozen run ledger, plan estimates;
// running: run_unit.hpp (MoE model moe_model.hpp, controls router_control.hpp); page: record counts
// (summary.hpp) and results (results_page.hpp).
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::router_balance {

class RouterBalanceExperiment : public Experiment {
 public:
  std::string id() const override { return "router-balance"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return true; }
  // The dataset loads (data root from --data-dir, $K3LAB_DATA_DIR or ./data) and the parameters name
  // what the runner implements.
  std::optional<std::string> preflight(const nlohmann::json& parameters, const nlohmann::json& options) const override;
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  // Stops the run at the first unit whose dataset could not be loaded: every later unit would fail
  // the same way.
  WindowVerdict check_window(const core::Protocol& protocol, const nlohmann::json& parameters,
                             const std::vector<nlohmann::json>& terminal_records) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::router_balance
