#pragma once
// per-head-muon (seed experiment seven): AdamW vs standard Muon vs Per-Head Muon, an equal
// eight-configuration search over two pilot seeds, then five fresh confirmatory seeds per optimizer.
// Planning half: schema, the frozen run ledger (confirmatory configuration resolved at run time), plan
// estimates and a record-count summary. The runner (optimizers, trainer, selection) extends it.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::per_head_muon {

class PerHeadMuonExperiment : public Experiment {
 public:
  std::string id() const override { return "per-head-muon"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::per_head_muon
