#pragma once
// hybrid-attention (seed experiment three): full attention vs all-KDA vs hybrid 3 KDA : 1 MLA at 120M
// parameters. Planning half: schema, the frozen run ledger, plan estimates and a record-count summary.
// The runner (models, trainer, probes) extends it by overriding has_runner and run_unit.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::hybrid_attention {

class HybridAttentionExperiment : public Experiment {
 public:
  std::string id() const override { return "hybrid-attention"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::hybrid_attention
