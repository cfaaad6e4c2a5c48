#include "context_probe/context_probe_experiment.hpp"

#include <algorithm>
#include <stdexcept>

#include "k3lab/api/endpoint_binding.hpp"
#include "k3lab/api/endpoint_choice.hpp"
#include "k3lab/api/transport_options.hpp"
#include "context_probe/parameters.hpp"
#include "context_probe/plan.hpp"
#include "context_probe/prompt_tokens.hpp"
#include "k3lab/mock/reader_model.hpp"
#include "context_probe/summary.hpp"
#include "context_probe/units.hpp"
#include "context_probe/window_rule.hpp"
#include "context_probe/cell_prompt.hpp"
#include "context_probe/repository_pin.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/validate/describe_fixture.hpp"

namespace k3lab::experiments {
namespace context_probe {

ContextProbeExperiment::ContextProbeExperiment(RunHooks hooks) : hooks_(std::move(hooks)) {
  if (!hooks_.clock) hooks_.clock = api::system_clock();
}

ContextProbeExperiment::~ContextProbeExperiment() {
  cells_.reset();
  if (embedded_) embedded_->stop();
}

const core::Schema& ContextProbeExperiment::parameter_schema() const { return context_probe::parameter_schema(); }

std::vector<Unit> ContextProbeExperiment::enumerate(const core::Protocol& protocol,
                                                    const nlohmann::json& parameters) const {
  require_arms(protocol.arms);
  return enumerate_units(parse_parameters(parameters));
}

nlohmann::json ContextProbeExperiment::plan_details(const core::Protocol&, const nlohmann::json& parameters,
                                                    const std::vector<Unit>& units) const {
  return context_probe::plan_details(parse_parameters(parameters), units);
}

CellRunner& ContextProbeExperiment::cells(const RunEnv& env) {
  if (cells_) return *cells_;
  CellRunnerSetup setup;
  setup.parameters = parse_parameters(env.parameters);
  setup.endpoint = api::choose_endpoint(env.options, "context-probe");
  setup.counter = make_prompt_token_counter(configured_vocabulary(setup.parameters, env.options));
  setup.clock = hooks_.clock;

  setup.parameters.model = api::request_model(env.options, setup.parameters.model);  // the served name, if any

  api::ClientConfig config;
  config.retry = api::RetryPolicy::with_retries(setup.parameters.transport_retries);
  config.max_in_flight = 1;  // one call per unit, units in ledger order
  config.stop = env.stop_requested;
  api::apply_transport_options(env.parameters, env.options, config);
  if (setup.endpoint.embedded()) {
    api::MockServerOptions options;
    options.models = {setup.parameters.model};
    options.model = mock::context_reader_model(hooks_.embedded_reader);
    options.faults = hooks_.embedded_faults;
    // One mock session for the whole run (unlike agent-replay): a warm cell needs its priming call's
    // cached prefix. Every other prompt is a cell's own, and a resume sends the priming request again
    // (cell_runner.hpp), so a resumed unit is still answered as in an uninterrupted run.
    embedded_ = api::start_embedded_mock(std::move(options), "context-probe");
    config.base_url = embedded_->base_url();
  } else {
    config.base_url = setup.endpoint.base_url;
  }
  setup.client = std::make_shared<const api::ChatClient>(config, hooks_.clock);
  // Salting prefix ids with the run dir's name keeps a later window off this window's cache; the
  // embedded mock's cache is born empty with the process, so its ledgers stay reproducible unsalted.
  setup.window_id = setup.endpoint.embedded() ? std::string() : env.run_dir.filename().string();

  const auto ledger = core::read_ledger(env.run_dir);
  std::map<std::string, std::string> earlier;
  for (const auto& r : ledger.records) {
    const std::string kind = r.value("kind", "");
    if (core::is_terminal_kind(kind) && r.contains("unit")) earlier[r["unit"].get<std::string>()] = kind;
  }
  setup.window = api::open_test_window(ledger, setup.parameters.test_window_hours, hooks_.clock->utc_now());
  cells_ = std::make_unique<CellRunner>(std::move(setup), std::move(earlier));
  return *cells_;
}

std::optional<std::string> ContextProbeExperiment::preflight(const nlohmann::json& parameters,
                                                            const nlohmann::json&) const {
  const Parameters p = parse_parameters(parameters);
  if (std::find(p.families.begin(), p.families.end(), "repository") == p.families.end()) return std::nullopt;
  try {
    pinned_repository(p.repository);
  } catch (const core::ProtocolError&) {
    throw;  // the installed repository differs from the pin: exit 3, nothing recorded
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

UnitOutcome ContextProbeExperiment::run_unit(const Unit& unit, RunEnv& env) { return cells(env).run(unit); }

std::unique_ptr<WindowRule> ContextProbeExperiment::window_rule(const core::Protocol&, const nlohmann::json& parameters) const {
  return invalid_window_rule(parse_parameters(parameters));
}

std::optional<nlohmann::json> ContextProbeExperiment::describe_fixture(const nlohmann::json& parameters,
                                                                       const nlohmann::json& spec,
                                                                       bool include_prompt) const {
  const Parameters p = parse_parameters(parameters);
  const auto counter = make_prompt_token_counter(configured_vocabulary(p, nlohmann::json::object()));
  const auto cell = build_cell_prompt(p, spec, "", counter.estimator);
  auto out = validate::describe_fixture(cell.fixture, {include_prompt});
  out["cell"] = {{"family", spec.at("family")},
                 {"fixture", spec.at("fixture")},
                 {"length", spec.at("length")},
                 {"budget", cell.budget.to_json()},
                 {"token_counter", counter.to_json()}};
  return out;
}

std::vector<std::string> ContextProbeExperiment::run_labels(const nlohmann::json& options) const {
  return api::endpoint_labels(api::choose_endpoint(options, "context-probe"));
}

void ContextProbeExperiment::summarise(const core::Protocol& protocol, const RunRecords& records,
                                       report::Page& page) const {
  summarise_run(protocol, records, page);
}

std::unique_ptr<Experiment> make_experiment() { return std::make_unique<ContextProbeExperiment>(); }

}  // namespace context_probe

}  // namespace k3lab::experiments
