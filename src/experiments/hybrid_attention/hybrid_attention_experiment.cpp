#include "hybrid_attention/hybrid_attention_experiment.hpp"

#include <stdexcept>

#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/plan.hpp"
#include "hybrid_attention/results_page.hpp"
#include "hybrid_attention/run_unit.hpp"
#include "hybrid_attention/summary.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/experiments/hybrid_attention.hpp"
#include "k3lab/train/dataset.hpp"

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

std::optional<std::string> HybridAttentionExperiment::preflight(const nlohmann::json& parameters,
                                                                const nlohmann::json& options) const {
  const auto p = parse_parameters(parameters);
  return dataset_problem({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(options)});
}

UnitOutcome HybridAttentionExperiment::run_unit(const Unit& unit, RunEnv& env) { return run_training_unit(unit, env); }

WindowVerdict HybridAttentionExperiment::check_window(const core::Protocol&, const nlohmann::json&,
                                                     const std::vector<nlohmann::json>& terminal_records) const {
  return data_unavailable_stop(terminal_records).value_or(WindowVerdict{});
}

void HybridAttentionExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
  add_results(protocol, records, page);
}

}  // namespace hybrid_attention

std::unique_ptr<Experiment> make_hybrid_attention_experiment() { return std::make_unique<hybrid_attention::HybridAttentionExperiment>(); }

}  // namespace k3lab::experiments
