#pragma once
// The contract between the generic runner and one experiment module (src/experiments/<id>/).
// A module enumerates its units deterministically from the resolved parameters (the frozen ledger),
// runs one unit at a time, and summarises ledger records into a report page. It never writes the
// ledger's terminal records itself: it returns an outcome and the runner records it.
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/peer_group.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/schema.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

struct Unit {
  std::string id;       // stable, unique, e.g. "mix=shift/trace=seeded-07/policy=unified"
  nlohmann::json spec;  // coordinates and anything the unit needs, derived from parameters
};

struct UnitOutcome {
  enum class Kind { Result, Invalid, Failure };
  Kind kind = Kind::Result;
  nlohmann::json data;        // the measurements (deterministic); wall-clock numbers go in `timing`
  nlohmann::json timing;      // wall-clock measurements, ignored by determinism checks
  std::string reason;         // Invalid: why the unit is excluded; Failure: its class (e.g. "nan-loss", "oom")
  std::string detail;         // human-readable explanation

  static UnitOutcome result(nlohmann::json data, nlohmann::json timing = nlohmann::json::object());
  static UnitOutcome invalid(std::string reason, std::string detail, nlohmann::json data = nlohmann::json::object());
  static UnitOutcome failure(std::string failure_class, std::string detail,
                             nlohmann::json data = nlohmann::json::object());
};

// What a unit may use while it runs.
struct RunEnv {
  const core::Protocol& protocol;
  const nlohmann::json& parameters;  // resolved for the profile
  std::string profile;
  std::filesystem::path run_dir;
  std::filesystem::path artifacts_dir;  // run_dir/artifacts
  bool frozen = true;
  nlohmann::json options;  // execution options from the command line (base_url, threads, device...)
  // Appends a non-terminal record (attempt, note); the runner fills unit/seq/t.
  std::function<void(const std::string& unit, nlohmann::json record)> note;
  // Progress inside a long unit (0..1); optional for the module to call.
  std::function<void(double fraction)> progress;
  const std::atomic<bool>* stop_requested = nullptr;
  // The data-parallel group when the command runs as several ranks (docs/slurm.md); null otherwise.
  // Only rank 0's outcome is recorded.
  core::PeerGroup* distributed = nullptr;
};

// A verdict over the whole window, checked after each unit (e.g. "more than 5% invalid: stop").
struct WindowVerdict {
  bool stop = false;
  std::string reason;
  nlohmann::json data;
};

// A window rule fed the run's terminal records one at a time, in ledger order. It keeps running counts,
// so the check after each unit costs the same whether the run has ten units or twenty thousand.
class WindowRule {
 public:
  virtual ~WindowRule() = default;
  virtual void add(const nlohmann::json& terminal_record) = 0;
  // The verdict over every record added so far.
  virtual WindowVerdict verdict() const = 0;
};

// Feeds `rule` every record of `terminal_records` and returns its verdict.
WindowVerdict verdict_over(WindowRule& rule, const std::vector<nlohmann::json>& terminal_records);

// Everything a summary may read: the manifest and the ledger (union of shards), nothing live.
struct RunRecords {
  nlohmann::json manifest;
  core::LedgerContents ledger;
  std::filesystem::path run_dir;
  // Terminal record per unit id (last one wins if a unit had several, which the runner prevents), in
  // plan order. Shares the ledger's text: read by value, one record at a time (ledger_records.hpp).
  core::LedgerRecords terminal_records() const;
};

class Experiment {
 public:
  virtual ~Experiment() = default;

  virtual std::string id() const = 0;
  // The schema of `parameters` (validated under every profile when the protocol loads).
  virtual const core::Schema& parameter_schema() const = 0;
  // The frozen ledger: every unit, in execution order, derived only from parameters.
  virtual std::vector<Unit> enumerate(const core::Protocol& protocol, const nlohmann::json& parameters) const = 0;
  // Extra plan facts shown by `plan` (counts by axis, estimates of cost/time/tokens...).
  virtual nlohmann::json plan_details(const core::Protocol& protocol, const nlohmann::json& parameters,
                                      const std::vector<Unit>& units) const;
  // Whether run_unit trains with RunEnv::distributed, so that the command may run as several ranks.
  virtual bool supports_data_parallel() const { return false; }
  // Whether run_unit computes with LibTorch's thread pools (so `run` first makes idle OpenMP workers
  // sleep: core/thread_policy.hpp); the API experiments and the simulator do not.
  virtual bool computes_with_libtorch() const { return false; }
  // What must hold before any run dir is chosen or record written (inputs present, e.g. a dataset):
  // the problem and its fix, or nullopt. A missing input is a setup error, not a result of the run.
  virtual std::optional<std::string> preflight(const nlohmann::json& parameters, const nlohmann::json& options) const {
    (void)parameters;
    (void)options;
    return std::nullopt;
  }
  virtual UnitOutcome run_unit(const Unit& unit, RunEnv& env) = 0;
  // The ground truth of the fixture a unit with these coordinates would use, generated by the runner's
  // own code path (`k3lab fixture`); nullopt for an experiment without fixtures.
  virtual std::optional<nlohmann::json> describe_fixture(const nlohmann::json& parameters, const nlohmann::json& spec,
                                                         bool include_prompt) const {
    (void)parameters;
    (void)spec;
    (void)include_prompt;
    return std::nullopt;
  }
  // The window rule for these parameters (default: one that never stops); the runner feeds it each
  // terminal record and stops the run when its verdict says so.
  virtual std::unique_ptr<WindowRule> window_rule(const core::Protocol& protocol,
                                                  const nlohmann::json& parameters) const;
  // The verdict of a fresh window rule fed every record of `terminal_records`.
  WindowVerdict check_window(const core::Protocol& protocol, const nlohmann::json& parameters,
                             const std::vector<nlohmann::json>& terminal_records) const;
  // Labels every record and page of a run carries (e.g. "simulated endpoint"); from options.
  virtual std::vector<std::string> run_labels(const nlohmann::json& options) const;
  // Fills tables, charts and text (the page header, failure log and excluded data are filled by the
  // caller from the protocol and ledger).
  virtual void summarise(const core::Protocol& protocol, const RunRecords& records, report::Page& page) const = 0;
};

// The one validation path of `validate`, `plan` and `run`: the protocol's schema (the module's parameter
// schema included), then the module's own cross-field rules, checked by enumerating the units of every
// profile. Throws core::ProtocolError (exit 3) listing every problem; when the schema already fails,
// the cross-field rules, which need well-typed parameters, are not reached.
core::Protocol load_checked_protocol(const Experiment& experiment, const std::filesystem::path& file,
                                     core::FileNaming naming = core::FileNaming::MustMatchId);

using ExperimentFactory = std::function<std::unique_ptr<Experiment>()>;

// The experiments a program knows, in the seed's order. The k3lab binary's catalog is the registry
// (k3lab/experiments/registry.hpp), the one place that names every module; tests may build their own.
struct Catalog {
  std::vector<std::string> ids;
  // The module for an id; throws std::invalid_argument (with a did-you-mean) for an unknown one.
  std::function<std::unique_ptr<Experiment>(const std::string& id)> make;
};

}  // namespace k3lab::experiments
