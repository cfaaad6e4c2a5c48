#include "hybrid_attention/hybrid_attention_experiment.hpp"

#include <stdexcept>

#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/plan.hpp"
#include "hybrid_attention/summary.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/experiments/hybrid_attention.hpp"

namespace k3lab::experiments {
namespace hybrid_attention {

const core::Schema& HybridAttentionExperiment::parameter_schema() const { return hybrid_attention::parameter_schema(); }

std::vector<Unit> HybridAttentionExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json HybridAttentionExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return hybrid_attention::plan_details(parse_parameters(parameters), units);
}

UnitOutcome HybridAttentionExperiment::run_unit(const Unit&, RunEnv&) {
  throw std::logic_error("hybrid-attention: runner not built yet");
}

void HybridAttentionExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
}

}  // namespace hybrid_attention

std::unique_ptr<Experiment> make_hybrid_attention_experiment() { return std::make_unique<hybrid_attention::HybridAttentionExperiment>(); }

}  // namespace k3lab::experiments
