// Choosing the run dir: an explicit one, the latest of this experiment and profile, or a new one, all
// under the experiment's RunChoiceLock so that two commands started together agree on one run dir.
// Then the frozen plan record and the units this command runs.
#include <set>

#include <spdlog/spdlog.h>

#include "k3lab/core/allocator_policy.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/thread_policy.hpp"
#include "runner_stages.hpp"

namespace k3lab::experiments::stages {
namespace {

bool window_stopped(const core::LedgerContents& ledger, std::string* reason) {
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") == "window" && r.value("stop", false)) {
      if (reason) *reason = r.value("reason", "");
      return true;
    }
  }
  return false;
}

nlohmann::json new_manifest(const Design& design, const RunRequest& request, const nlohmann::json& data_parallel) {
  const auto& protocol = design.protocol;
  nlohmann::json manifest;
  manifest["experiment"] = protocol.id;
  manifest["title"] = protocol.title;
  manifest["evidence_class"] = protocol.evidence_class;
  manifest["profile"] = request.profile;
  manifest["protocol_sha256"] = protocol.hash();
  manifest["design_sha256"] = design.hash;
  manifest["frozen"] = design.frozen;
  manifest["unfrozen"] = !design.frozen;
  manifest["freeze_record"] = design.freeze.record ? design.freeze.record->to_json() : nlohmann::json(nullptr);
  manifest["set_overrides"] = request.set_overrides;
  manifest["protocol"] = protocol.document;
  manifest["parameters"] = design.parameters;
  manifest["units_planned"] = design.units.size();
  manifest["labels"] = design.labels;
  manifest["options"] = request.options;
  // The pools a training unit sets from it (train::apply_thread_policy); API calls run one at a time.
  manifest["thread_policy"] = core::choose_thread_policy(request.options.value("threads", 0)).to_json();
  manifest["allocator_policy"] = core::allocator_policy().to_json();
  manifest["provenance"] = core::provenance(protocol.path.parent_path(), request.argv);
  if (!data_parallel.is_null()) manifest["data_parallel"] = data_parallel;
  return manifest;
}

// An existing run dir of this design: resume it, or end the command when there is nothing to do.
std::optional<RunSummary> nothing_to_do(const Design& design, const RunRequest& request, const core::RunDirInfo& run,
                                        const core::LedgerContents& ledger) {
  std::string stopped_reason;
  const auto done = core::finished_units(ledger);
  const std::set<std::string> done_set(done.begin(), done.end());
  std::size_t remaining = 0;
  for (const auto& u : design.units) remaining += done_set.count(u.id) ? 0 : 1;
  const bool whole_run = request.only_units.empty() && !request.shard;
  if (!window_stopped(ledger, &stopped_reason) && (remaining > 0 || !whole_run)) return std::nullopt;
  RunSummary summary;
  summary.planned = design.units.size();
  summary.run_dir = run.path;
  summary.already_complete = true;
  count_terminal(RunRecords{run.manifest, ledger, run.path}.terminal_records(), summary);
  summary.message = run.path.string() + (stopped_reason.empty()
                                             ? " is complete (" + std::to_string(design.units.size()) + " units)"
                                             : " was stopped by its window rule: " + stopped_reason) +
                    "; nothing to do. `k3lab report" +
                    (request.runs_root == RunRequest{}.runs_root ? std::string() : " --runs " + request.runs_root.string()) +
                    "` renders it; --fresh starts a new run";
  // A stopped window is not a success to rerun into: the same exit code as when the rule stopped it, so a
  // script (or a corrected --base-url) does not read "nothing to do" as done.
  if (!stopped_reason.empty()) summary.exit_code = kExitWindowStopped;
  flag_duplicate_terminal(ledger, run.path, summary);
  return summary;
}

// What an existing run dir means for this command: extend it (nullopt and `keep`), leave it for a new
// one (nullopt, !keep), or end the command with this summary.
std::optional<RunSummary> judge_existing(const Design& design, const RunRequest& request, const core::RunDirInfo& run,
                                         bool& keep) {
  keep = false;
  const auto ledger = core::read_ledger(run.path);
  if (run.manifest.value("design_sha256", "") != design.hash) {
    if (!core::finished_units(ledger).empty() || request.run_dir) {
      return refusal(kExitProtocol, "refusing to resume " + run.path.string() +
                                        ": its protocol/parameters differ from the current ones and it already holds "
                                        "results. Restore the protocol it was run with, or start a separate run with "
                                        "--fresh");
    }
    return std::nullopt;  // an untouched run of an older design: leave it, start anew
  }
  const bool unfrozen_run = run.manifest.value("unfrozen", false);
  if (unfrozen_run != !design.frozen) {
    return refusal(kExitProtocol, run.path.string() + " was started " + (unfrozen_run ? "with --unfrozen" : "frozen") +
                                      "; resume it the same way, or start a separate run with --fresh");
  }
  if (auto done = nothing_to_do(design, request, run, ledger)) return done;
  keep = true;
  return std::nullopt;
}

}  // namespace

void flag_duplicate_terminal(const core::LedgerContents& ledger, const std::filesystem::path& run_dir,
                             RunSummary& summary) {
  summary.duplicate_terminal = core::describe_duplicates(core::duplicate_terminal_records(ledger));
  if (summary.duplicate_terminal.empty()) return;
  for (const auto& line : summary.duplicate_terminal) {
    spdlog::error("{}: DUPLICATE terminal records for unit {}", run_dir.string(), line);
  }
  summary.message = "LEDGER ERROR: " + std::to_string(summary.duplicate_terminal.size()) +
                    " unit(s) have more than one terminal record (" + summary.duplicate_terminal.front() +
                    "): two processes ran them (before unit leases, or beside a k3lab without them). A person must "
                    "decide which record stands and move the other line out of the run dir. " + summary.message;
  if (summary.exit_code == kExitOk) summary.exit_code = kExitError;
}

std::variant<ChosenRunDir, RunSummary> choose_run_dir(const Design& design, const RunRequest& request,
                                                      const nlohmann::json& data_parallel) {
  // An explicit run dir is locked where it lives (<runs root>/<id>/<run dir>), not under --out.
  const auto runs_root = request.run_dir ? request.run_dir->parent_path().parent_path() : request.runs_root;
  auto lock = std::make_unique<core::RunChoiceLock>(runs_root, request.experiment_id);
  std::optional<core::RunDirInfo> run;
  if (request.run_dir) {
    run = core::RunDirInfo{*request.run_dir, core::read_manifest(*request.run_dir)};
  } else if (!request.fresh) {
    run = core::latest_run_dir(*lock, request.profile);
  }
  if (run) {
    bool keep = false;
    if (auto ended = judge_existing(design, request, *run, keep)) return *ended;
    if (keep) {
      spdlog::info("{}: resuming {}", request.experiment_id, run->path.string());
      return ChosenRunDir{*run, false, std::move(lock)};
    }
  }
  auto created = core::create_run_dir(*lock, new_manifest(design, request, data_parallel));
  spdlog::info("{}: new run {}", request.experiment_id, created.path.string());
  return ChosenRunDir{std::move(created), true, std::move(lock)};
}

void write_plan_once(core::LedgerWriter& writer, const core::LedgerContents& ledger, const Design& design) {
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") == "plan") return;
  }
  nlohmann::json ids = nlohmann::json::array();
  for (const auto& u : design.units) ids.push_back(u.id);
  writer.append({{"kind", "plan"}, {"units", ids}, {"count", design.units.size()}, {"design_sha256", design.hash}});
}

std::variant<std::vector<const Unit*>, RunSummary> select_units(const Design& design, const RunRequest& request,
                                                                const std::vector<nlohmann::json>& terminal) {
  std::set<std::string> done;
  for (const auto& r : terminal) done.insert(r["unit"].get<std::string>());
  const std::set<std::string> only(request.only_units.begin(), request.only_units.end());
  std::vector<const Unit*> todo;
  for (std::size_t i = 0; i < design.units.size(); ++i) {
    const auto& u = design.units[i];
    if (done.count(u.id)) continue;
    if (!only.empty() && !only.count(u.id)) continue;
    if (request.shard && i % request.shard->second != request.shard->first) continue;
    todo.push_back(&u);
  }
  for (const auto& wanted : only) {
    bool known = false;
    for (const auto& u : design.units) known = known || u.id == wanted;
    if (!known) {
      return refusal(kExitUsage, "--unit " + wanted + " is not a unit of " + design.protocol.id + " (`k3lab plan " +
                                     design.protocol.id + " --units` lists them)");
    }
  }
  return todo;
}

}  // namespace k3lab::experiments::stages
