#pragma once
// One proxy-training experiment: the Experiment a module gets by describing only what is its own
// (parameters, arms and units, plan facts, how one unit trains, its results and decision rule). The
// rest is the same for all five: arm checks, the dataset preflight, the window rule for a vanished
// dataset, data-parallel training, the page's first table (terminal records against the plan), the
// "partial" label on everything after it until every planned run has ended, and a smoke page's
// transfer limit from the run's real sizes.
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/design.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/experiments/training/records_by_group.hpp"
#include "k3lab/experiments/training/smoke_scale.hpp"
#include "k3lab/experiments/training/training_unit.hpp"

namespace k3lab::experiments::training {

template <class P>
struct ProxyModule {
  const ParameterSet<P>* parameters = nullptr;  // also names the experiment
  std::vector<std::string> arms = {};  // exactly the protocol's arms
  std::function<std::vector<Unit>(const P&)> units = {};
  std::function<nlohmann::json(const P&, const std::vector<Unit>&)> plan = {};
  std::function<UnitOutcome(const Unit&, RunEnv&)> run = {};
  // Everything after the first table: results, charts, the decision rule.
  std::function<void(const core::Protocol&, const RunRecords&, report::Page&)> results = {};
  RecordsByGroupTable records = {};  // the first table; its caption says how failures count
  bool records_intro = false;       // a line "<id>: terminal records by arm against the plan; ..." above it
  bool data_parallel = true;        // run_unit trains with RunEnv::distributed
  // What a run needs beyond the schema (the problem and its fix), checked before the dataset.
  std::function<std::optional<std::string>(const P&)> runner_problem = {};
  // A check of the loaded dataset (throws with the problem), e.g. that a probe's sample fits in it.
  std::function<void(const P&, const train::Dataset&)> check_dataset = {};
  // Invalid reasons that stop the run (every later unit would end the same way).
  std::vector<std::string> stop_on_invalid = {};
};

// The window rule every proxy experiment shares: stop at the first data-unavailable failure or at
// the first invalid record with one of `stop_on_invalid`'s reasons (its detail says why).
std::unique_ptr<WindowRule> proxy_window_rule(std::vector<std::string> stop_on_invalid);

// The refusal when an arm's training step cannot fit the memory of the device the run trains on
// (options' device: a GPU's memory, or this machine's RAM on the CPU), from the plan details' memory
// plans; nullopt when every arm fits or the device cannot be resolved (the unit then says why).
// On the CPU, an arm's micro-batches may train side by side (train/micro_batch_lanes.hpp): `rows_per_step`
// (0: unknown, one lane) and options' threads say how many.
std::optional<std::string> memory_problem(const nlohmann::json& plan_details, const nlohmann::json& options,
                                          std::int64_t rows_per_step);

// A smoke page's can-say: one line from the run's real sizes beside the full profile's (the report
// builder already set the smoke cannot-say line).
void set_smoke_transfer_limit(const std::string& experiment_id, const RunScale& smoke, const RunScale& full,
                              report::Page& page);

// The first table of the page, against the plan when the manifest holds parameters.
void add_records_table(const core::Protocol& protocol, const RunRecords& records,
                       const std::optional<std::vector<Unit>>& planned, const RecordsByGroupTable& table,
                       bool intro, report::Page& page);

template <class P>
class ProxyExperiment final : public Experiment {
 public:
  explicit ProxyExperiment(ProxyModule<P> module) : m_(std::move(module)) {}

  std::string id() const override { return m_.parameters->experiment_id(); }
  bool computes_with_libtorch() const override { return true; }
  const core::Schema& parameter_schema() const override { return m_.parameters->schema(); }
  std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const override {
    require_arms(id(), protocol.arms, m_.arms);
    return m_.units(m_.parameters->parse(parameters));
  }
  nlohmann::json plan_details(const core::Protocol&, const nlohmann::json& parameters,
                              const std::vector<Unit>& units) const override {
    return m_.plan(m_.parameters->parse(parameters), units);
  }
  bool supports_data_parallel() const override { return m_.data_parallel; }
  // The parameters name what the runner implements, the dataset loads (and passes the module's check)
  // and the downstream suite is in place and matches its pin.
  std::optional<std::string> preflight(const nlohmann::json& parameters, const nlohmann::json& options) const override {
    const auto p = m_.parameters->parse(parameters);
    if (m_.runner_problem) {
      if (auto problem = m_.runner_problem(p)) return problem;
    }
    std::int64_t rows_per_step = 0;
    if constexpr (std::is_base_of_v<Batching, P>) rows_per_step = p.batch_tokens / p.sequence_length;
    if (auto problem = memory_problem(m_.plan(p, m_.units(p)), options, rows_per_step)) return problem;
    try {
      const auto data = train::load_dataset(dataset_request(p, p.model.vocab_size, options));
      if (m_.check_dataset) m_.check_dataset(p, data);
      if constexpr (std::is_base_of_v<DownstreamBlock, P>) {
        if (p.downstream) load_downstream_suite(*p.downstream, p.model.vocab_size, train::data_root_from(options));
      }
    } catch (const core::ProtocolError&) {
      throw;  // the folder differs from the protocol's pin (train::DataPinError): exit 3, nothing recorded
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  }
  UnitOutcome run_unit(const Unit& unit, RunEnv& env) override { return m_.run(unit, env); }
  std::unique_ptr<WindowRule> window_rule(const core::Protocol&, const nlohmann::json&) const override {
    return proxy_window_rule(m_.stop_on_invalid);
  }
  void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const override {
    std::optional<std::vector<Unit>> planned;
    if (records.manifest.contains("parameters")) planned = m_.units(m_.parameters->parse(records.manifest.at("parameters")));
    const auto terminal = records.terminal_records();
    if (planned && smoke_profile(records.manifest) && protocol.document.value("profiles", nlohmann::json::object()).contains("full")) {
      set_smoke_scale(protocol, *planned, terminal, records, page);
    }
    add_records_table(protocol, records, planned, m_.records, m_.records_intro, page);
    const std::size_t first_result = page.blocks.size();
    m_.results(protocol, records, page);
    const std::size_t planned_runs =
        planned ? planned->size() : records.manifest.value("units_planned", static_cast<std::size_t>(0));
    label_partial(page, first_result, terminal.size(), planned_runs);
  }

 private:
  void set_smoke_scale(const core::Protocol& protocol, const std::vector<Unit>& planned,
                       const std::vector<nlohmann::json>& terminal, const RunRecords& records, report::Page& page) const {
    const auto smoke = m_.parameters->parse(records.manifest.at("parameters"));
    const auto full = m_.parameters->parse(protocol.parameters_for("full"));
    const auto full_units = m_.units(full);
    set_smoke_transfer_limit(id(), run_scale(m_.plan(smoke, planned), planned, terminal),
                             run_scale(m_.plan(full, full_units), full_units), page);
  }

  ProxyModule<P> m_;
};

template <class P>
std::unique_ptr<Experiment> make_proxy_experiment(ProxyModule<P> module) {
  return std::make_unique<ProxyExperiment<P>>(std::move(module));
}

}  // namespace k3lab::experiments::training
