#include "situ_qat/situ_qat_experiment.hpp"

#include <stdexcept>

#include "situ_qat/activation_probe.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/plan.hpp"
#include "situ_qat/results_page.hpp"
#include "situ_qat/run_unit.hpp"
#include "situ_qat/summary.hpp"
#include "situ_qat/units.hpp"
#include "k3lab/experiments/situ_qat.hpp"
#include "k3lab/train/dataset.hpp"

namespace k3lab::experiments {
namespace situ_qat {

const core::Schema& SituQatExperiment::parameter_schema() const { return situ_qat::parameter_schema(); }

std::vector<Unit> SituQatExperiment::enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json SituQatExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                 const std::vector<Unit>& units) const {
  return situ_qat::plan_details(parse_parameters(parameters), units);
}

std::optional<std::string> SituQatExperiment::preflight(const nlohmann::json& parameters,
                                                        const nlohmann::json& options) const {
  const auto p = parse_parameters(parameters);
  if (auto problem = runner_problem(p)) return problem;
  try {
    const auto data = train::load_dataset({p.dataset, p.tokenizer, p.model.vocab_size, train::data_root_from(options)});
    ActivationProbe probe(p, data);  // the fixed activation sample fits the validation text
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

UnitOutcome SituQatExperiment::run_unit(const Unit& unit, RunEnv& env) { return run_training_unit(unit, env); }

WindowVerdict SituQatExperiment::check_window(const core::Protocol&, const nlohmann::json&,
                                              const std::vector<nlohmann::json>& terminal_records) const {
  return data_unavailable_stop(terminal_records).value_or(WindowVerdict{});
}

void SituQatExperiment::summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const {
  summarise_run(protocol, records, page);
  add_results(protocol, records, page);
}

}  // namespace situ_qat

std::unique_ptr<Experiment> make_situ_qat_experiment() { return std::make_unique<situ_qat::SituQatExperiment>(); }

}  // namespace k3lab::experiments
