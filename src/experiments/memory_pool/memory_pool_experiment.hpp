#pragma once
#include <memory>

#include "k3lab/experiments/experiment.hpp"
#include "memory_pool/run_unit.hpp"

namespace k3lab::experiments::memory_pool {

class MemoryPoolExperiment : public Experiment {
 public:
  std::string id() const override { return "memory-pool"; }
  const core::Schema& parameter_schema() const override;
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override;
  nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override;
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override;
  std::vector<std::string> run_labels(const nlohmann::json& options) const override;
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override;

 private:
  UnitRunner runner_;
};

// The module's one factory (the registry's row for it).
std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::memory_pool
