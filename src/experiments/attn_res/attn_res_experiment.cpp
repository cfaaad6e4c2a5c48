#include "attn_res/attn_res_experiment.hpp"

#include "attn_res/parameters.hpp"
#include "attn_res/plan.hpp"
#include "attn_res/results_page.hpp"
#include "attn_res/run_unit.hpp"
#include "attn_res/summary.hpp"
#include "attn_res/units.hpp"
#include "k3lab/experiments/attn_res.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments {
namespace attn_res {

const core::Schema& AttnResExperiment::parameter_schema() const { return attn_res::parameter_schema(); }

std::vector<Unit> AttnResExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json AttnResExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return attn_res::plan_details(parse_parameters(parameters), units);
}

std::optional<std::string> AttnResExperiment::preflight(const nlohmann::json& parameters,
                                                        const nlohmann::json& options) const {
  const auto p = parse_parameters(parameters);
  return dataset_problem({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(options)});
}

UnitOutcome AttnResExperiment::run_unit(const Unit& unit, RunEnv& env) { return run_training_unit(unit, env); }

WindowVerdict AttnResExperiment::check_window(const core::Protocol&, const nlohmann::json&,
                                              const std::vector<nlohmann::json>& terminal_records) const {
  return data_unavailable_stop(terminal_records).value_or(WindowVerdict{});
}

void AttnResExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
  add_results(protocol, records, page);
}

}  // namespace attn_res

std::unique_ptr<Experiment> make_attn_res_experiment() { return std::make_unique<attn_res::AttnResExperiment>(); }

}  // namespace k3lab::experiments
