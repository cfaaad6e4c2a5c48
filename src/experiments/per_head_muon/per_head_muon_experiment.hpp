#pragma once
// per-head-muon (seed experiment seven): AdamW vs standard Muon vs Per-Head Muon, an equal
// eight-configuration search over two pilot seeds, then five fresh confirmatory seeds per optimizer.
// Planning: schema, the frozen run ledger (confirmatory configuration resolved at run time), plan
// estimates; running: run_unit.hpp (optimizers: muon_optimizer.hpp, selection: selection.hpp); page:
// record counts (summary.hpp) and results (results_page.hpp).
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::per_head_muon {

class PerHeadMuonExperiment : public Experiment {
 public:
  std::string id() const override { return "per-head-muon"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return true; }
  bool supports_data_parallel() const override { return true; }
  // The dataset loads (data root from --data-dir, $K3LAB_DATA_DIR or ./data).
  std::optional<std::string> preflight(const nlohmann::json& parameters, const nlohmann::json& options) const override;
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  // Stops the run at a unit whose dataset could not be loaded, or at a confirmatory unit that found
  // its arm's pilots unfinished: every later unit would end the same way.
  WindowVerdict check_window(const core::Protocol& protocol, const nlohmann::json& parameters,
                             const std::vector<nlohmann::json>& terminal_records) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::per_head_muon
