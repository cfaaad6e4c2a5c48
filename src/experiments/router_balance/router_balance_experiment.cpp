#include "router_balance/router_balance_experiment.hpp"

#include <stdexcept>

#include "router_balance/parameters.hpp"
#include "router_balance/plan.hpp"
#include "router_balance/results_page.hpp"
#include "router_balance/run_unit.hpp"
#include "router_balance/summary.hpp"
#include "router_balance/units.hpp"
#include "k3lab/experiments/router_balance.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments {
namespace router_balance {

const core::Schema& RouterBalanceExperiment::parameter_schema() const { return router_balance::parameter_schema(); }

std::vector<Unit> RouterBalanceExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json RouterBalanceExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return router_balance::plan_details(parse_parameters(parameters), units);
}

std::optional<std::string> RouterBalanceExperiment::preflight(const nlohmann::json& parameters,
                                                              const nlohmann::json& options) const {
  const auto p = parse_parameters(parameters);
  if (auto problem = runner_problem(p)) return problem;
  return dataset_problem({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(options)});
}

UnitOutcome RouterBalanceExperiment::run_unit(const Unit& unit, RunEnv& env) { return run_training_unit(unit, env); }

WindowVerdict RouterBalanceExperiment::check_window(const core::Protocol&, const nlohmann::json&,
                                                    const std::vector<nlohmann::json>& terminal_records) const {
  return data_unavailable_stop(terminal_records).value_or(WindowVerdict{});
}

void RouterBalanceExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
  add_results(protocol, records, page);
}

}  // namespace router_balance

std::unique_ptr<Experiment> make_router_balance_experiment() { return std::make_unique<router_balance::RouterBalanceExperiment>(); }

}  // namespace k3lab::experiments
