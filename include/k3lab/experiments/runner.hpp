#pragma once
// The generic runner: freeze check, run-dir selection and resume, the frozen ledger, one terminal
// record per unit, window rules, progress. Every experiment runs through it.
#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/peer_group.hpp"
#include "k3lab/core/unit_lease.hpp"

namespace k3lab::experiments {

class Experiment;

// Exit codes shared by every subcommand (documented in README and `k3lab --help`).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,          // a runtime failure (I/O, a broken ledger, an exception)
  kExitUsage = 2,          // bad command line
  kExitProtocol = 3,       // a protocol is invalid, not frozen, or differs from its freeze/run
  kExitWindowStopped = 4,  // a window rule stopped the run (e.g. more than 5% invalid)
  kExitInterrupted = 130,  // SIGINT/SIGTERM: finished units are kept; run again to resume
};

struct RunRequest {
  std::string experiment_id;
  std::string profile = "smoke";
  std::filesystem::path runs_root = "runs";
  bool unfrozen = false;
  bool fresh = false;
  std::vector<std::string> set_overrides;  // "a.b=value" (parameters; requires unfrozen)
  nlohmann::json options = nlohmann::json::object();  // execution options (not part of the design)
  std::vector<std::string> argv;
  std::optional<std::filesystem::path> run_dir;  // resume/extend this run dir instead of the latest
  std::string worker;                            // ledger shard name ("" = ledger.jsonl)
  std::vector<std::string> only_units;           // run only these unit ids (Slurm array tasks)
  std::optional<std::pair<std::size_t, std::size_t>> shard;  // (index, count): units with i % count == index
  // Create (or pick) the run dir and write its manifest and frozen plan, then return without running a
  // unit: a scheduler (src/exec) plans on the submit host, and its tasks then extend that run dir.
  bool plan_only = false;
  // For tests and embedding: use this module and protocol file instead of the registry's.
  std::function<std::unique_ptr<Experiment>()> experiment_factory;
  std::optional<std::filesystem::path> protocol_file;
  // Joins a data-parallel group when the launcher started several ranks (the training layer's
  // train::make_peer_group; the CLI sets it). Without one, a multi-rank launch is refused.
  core::PeerGroupFactory peer_group_factory;
  // Unit leases (docs/reliability.md): period, renewal, clock and liveness. Unset: the defaults, or
  // K3LAB_LEASE_SECONDS. Tests inject a clock and a liveness probe.
  std::optional<core::LeaseSettings> lease_settings;
  // The manifest's data_parallel entry for a new run dir when this process joins no group but its
  // units will run data-parallel elsewhere (a Slurm submission's srun ranks); null: none.
  nlohmann::json planned_data_parallel = nullptr;
};

struct RunSummary {
  int exit_code = kExitOk;
  std::filesystem::path run_dir;
  std::size_t planned = 0;
  std::size_t results = 0;
  std::size_t invalid = 0;
  std::size_t failures = 0;
  std::size_t ran_now = 0;
  std::vector<std::string> skipped_leased;      // units left to the live lease of another process
  std::vector<std::string> duplicate_terminal;  // units with more than one terminal record (see describe_duplicates)
  bool already_complete = false;
  std::string message;
};

// Set by signal handlers; checked between units and offered to units.
std::atomic<bool>& stop_flag();
void install_stop_handlers();

RunSummary run_experiment(const RunRequest& request);

// Applies "a.b=value" overrides to parameters (value parsed as JSON, else taken as a string).
// Only existing keys may be overridden; unknown keys get a did-you-mean.
void apply_overrides(nlohmann::json& parameters, const std::vector<std::string>& overrides);

// The design hash a run dir is bound to: protocol hash + resolved parameters.
std::string design_hash(const std::string& protocol_hash, const nlohmann::json& parameters);

}  // namespace k3lab::experiments
