// `k3lab status <run dir>`: units done, failed, running, queued and pending, from the ledger shards
// unit leases and (for Slurm submissions) sacct/scontrol; records the notes and outcome records that
// Slurm's end states owe. Exits 1 when a unit has two terminal records or a task's error needs a person.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/exec/slurm_executor.hpp"
#include "k3lab/experiments/registry.hpp"

namespace k3lab::cli {
namespace {

constexpr std::size_t kListedUnits = 40;
constexpr std::size_t kListedTasks = 20;

std::filesystem::path resolve_run_dir(const std::string& target, const std::string& runs_root) {
  if (std::filesystem::is_directory(target)) return target;
  const auto& ids = experiments::registry().ids;
  if (std::find(ids.begin(), ids.end(), target) != ids.end()) {
    const auto runs = core::list_run_dirs(runs_root, target);
    if (runs.empty()) throw std::invalid_argument("status: no run of " + target + " under " + runs_root + "/");
    return runs.back().path;
  }
  throw std::invalid_argument("status: " + target + " is neither a run directory nor an experiment id");
}

void print_text(const std::filesystem::path& run_dir, const exec::StatusResult& r, std::ostream& out) {
  using exec::UnitPhase;
  const auto& s = r.status;
  out << "run dir: " << run_dir.string() << "\n";
  out << "experiment: " << r.manifest.value("experiment", "?") << " (profile " << r.manifest.value("profile", "?")
      << (r.manifest.value("unfrozen", false) ? ", NOT FROZEN" : ", frozen") << ")\n";
  const std::size_t done = s.count(UnitPhase::Result) + s.count(UnitPhase::Invalid) + s.count(UnitPhase::Failed);
  out << "units: " << r.planned << " planned; " << done << " done (" << s.count(UnitPhase::Result) << " results, "
      << s.count(UnitPhase::Invalid) << " invalid, " << s.count(UnitPhase::Failed) << " failed), "
      << s.count(UnitPhase::Running) << " running, " << s.count(UnitPhase::Queued) << " queued, "
      << s.count(UnitPhase::Pending) << " pending" << (s.count(UnitPhase::Blocked) ? ", " + std::to_string(s.count(UnitPhase::Blocked)) + " blocked by an error" : "") << "\n";
  if (!r.window_stop.empty()) out << "STOPPED by the window rule: " << r.window_stop << "\n";
  for (const auto& line : s.duplicates) {
    out << "ERROR: DUPLICATE terminal records for unit " << line
        << ": two processes ran it; a person must decide which record stands\n";
  }
  for (const auto& line : s.needs_person) out << "ERROR (needs a person): " << line << "\n";
  if (r.failures_recorded > 0) {
    out << "recorded now: " << r.failures_recorded << " Slurm failure(s) of units that died with their task\n";
  }
  if (!r.jobs.empty()) {
    out << "slurm (" << (s.scheduler_source.empty() ? "no scheduler answer" : "states from " + s.scheduler_source)
        << "):\n";
    for (const auto& job : r.jobs) {
      std::map<std::string, std::size_t> states;
      for (const auto& t : s.tasks) {
        if (t.job_id == job.job_id) ++states[t.state];
      }
      out << "  job " << job.job_id << " (" << job.submitted << ", " << job.tasks.size() << " tasks, "
          << (job.layout == exec::TaskLayout::PerUnit ? "one unit each" : std::to_string(job.shard_count) + " shards")
          << "):";
      for (const auto& [state, n] : states) out << " " << n << " " << state;
      out << "\n";
    }
    // The tasks that ended (or vanished) holding units without a terminal record: where to look.
    std::size_t shown = 0, hidden = 0;
    for (const auto& t : s.tasks) {
      if (t.end == exec::TaskEnd::Active || t.unfinished == 0) continue;
      if (++shown > kListedTasks) {
        ++hidden;
        continue;
      }
      out << "    task " << t.job_id << "_" << t.index << " " << t.state
          << (t.exit_code.empty() || t.exit_code == "0:0" ? "" : " exit " + t.exit_code)
          << (t.node.empty() ? "" : " on " + t.node) << ", " << t.unfinished << " unit(s) unfinished: log " << t.log
          << "\n";
    }
    if (hidden > 0) out << "    ... and " << hidden << " more such tasks (--json lists every task)\n";
  }
  // Most telling first: failures and exclusions, then what is left to run, then what is under way.
  std::size_t listed = 0, unlisted = 0;
  for (auto phase : {UnitPhase::Blocked, UnitPhase::Failed, UnitPhase::Invalid, UnitPhase::Pending, UnitPhase::Running,
                     UnitPhase::Queued}) {
    for (const auto& u : s.units) {
      if (u.phase != phase) continue;
      if (listed++ == 0) out << "units without a result:\n";
      if (listed > kListedUnits) {
        ++unlisted;
        continue;
      }
      out << "  " << exec::to_string(u.phase) << "  " << u.unit;
      if (!u.note.empty()) out << "  (" << u.note << ")";
      out << "\n";
    }
  }
  if (unlisted > 0) out << "  ... and " << unlisted << " more (--json lists every unit)\n";
  for (const auto& n : s.notes) out << "note: " << n << "\n";
  if (s.count(UnitPhase::Pending) > 0 && r.window_stop.empty()) {
    out << "pending units run when you submit the same command again (`k3lab run ... --executor slurm`), or locally "
           "with `k3lab run ... --run-dir "
        << run_dir.string() << "`\n";
  }
}

}  // namespace

void register_status(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("status", "Show where each unit of a run stands (ledger shards and Slurm tasks)");
  struct Options {
    std::string target;
    std::string runs = "runs";
    bool json = false;
    bool no_record = false;
  };
  auto opt = std::make_shared<Options>();
  cmd->add_option("run", opt->target, "A run directory, or an experiment id (its newest run under --runs)")->required();
  cmd->add_option("--runs", opt->runs, "Runs root used when an experiment id is given")->capture_default_str();
  cmd->add_flag("--json", opt->json, "Print the status as JSON (every unit and task)");
  cmd->add_flag("--no-record", opt->no_record,
                "Do not append failure records for units that died with their Slurm task (read only)");
  cmd->callback([opt, &ctx] {
    const auto run_dir = resolve_run_dir(opt->target, opt->runs);
    exec::StatusOptions options;
    options.catalog = experiments::registry();
    options.record_failures = !opt->no_record;
    const auto result = exec::run_dir_status(run_dir, options);
    if (opt->json) {
      auto j = result.status.to_json();
      j["run_dir"] = run_dir.string();
      j["planned"] = result.planned;
      j["failures_recorded"] = result.failures_recorded;
      j["window_stop"] = result.window_stop;
      std::cout << j.dump(2) << "\n";
    } else {
      print_text(run_dir, result, std::cout);
    }
    // Both need a person: a ledger with two terminal records for a unit, a task whose error repeats.
    const bool broken = !result.status.duplicates.empty() || !result.status.needs_person.empty();
    ctx.exit_code = broken ? 1 : 0;
  });
}

}  // namespace k3lab::cli
