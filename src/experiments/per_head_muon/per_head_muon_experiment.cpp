#include "per_head_muon/per_head_muon_experiment.hpp"

#include <stdexcept>

#include "per_head_muon/parameters.hpp"
#include "per_head_muon/plan.hpp"
#include "per_head_muon/results_page.hpp"
#include "per_head_muon/run_unit.hpp"
#include "per_head_muon/summary.hpp"
#include "per_head_muon/units.hpp"
#include "k3lab/experiments/per_head_muon.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments {
namespace per_head_muon {

const core::Schema& PerHeadMuonExperiment::parameter_schema() const { return per_head_muon::parameter_schema(); }

std::vector<Unit> PerHeadMuonExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json PerHeadMuonExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return per_head_muon::plan_details(parse_parameters(parameters), units);
}

std::optional<std::string> PerHeadMuonExperiment::preflight(const nlohmann::json& parameters,
                                                            const nlohmann::json& options) const {
  const auto p = parse_parameters(parameters);
  return dataset_problem({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(options)});
}

UnitOutcome PerHeadMuonExperiment::run_unit(const Unit& unit, RunEnv& env) { return run_training_unit(unit, env); }

WindowVerdict PerHeadMuonExperiment::check_window(const core::Protocol&, const nlohmann::json&,
                                                  const std::vector<nlohmann::json>& terminal_records) const {
  if (auto stop = data_unavailable_stop(terminal_records)) return *stop;
  for (const auto& r : terminal_records) {
    if (r.value("kind", "") == "invalid" && r.value("reason", std::string()) == kPilotsUnfinished) {
      return {true, r.value("detail", std::string()), nlohmann::json::object()};
    }
  }
  return {};
}

void PerHeadMuonExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
  add_results(protocol, records, page);
}

}  // namespace per_head_muon

std::unique_ptr<Experiment> make_per_head_muon_experiment() { return std::make_unique<per_head_muon::PerHeadMuonExperiment>(); }

}  // namespace k3lab::experiments
