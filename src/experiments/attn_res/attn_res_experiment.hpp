#pragma once
// attn-res (seed experiment four): ordinary residuals vs Full AttnRes vs Block AttnRes (12-layer
// blocks), five paired seeds. Planning half: schema, the frozen run ledger, plan estimates and a
// record-count summary. The runner (models, trainer, decision statistics) extends it.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::attn_res {

class AttnResExperiment : public Experiment {
 public:
  std::string id() const override { return "attn-res"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::attn_res
