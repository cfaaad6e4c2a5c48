#pragma once
// situ-qat (seed experiment six): SwiGLU vs SiTU-GLU (beta1=4, beta2=25) under MXFP4-weight /
// MXFP8-activation quantization-aware training, five paired seeds. Planning half: schema, the frozen
// run ledger, plan estimates and a record-count summary. The runner (QAT trainer, histograms) extends it.
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::situ_qat {

class SituQatExperiment : public Experiment {
 public:
  std::string id() const override { return "situ-qat"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  bool has_runner() const override { return false; }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;
};

}  // namespace k3lab::experiments::situ_qat
