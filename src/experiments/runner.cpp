#include "k3lab/experiments/runner.hpp"

#include <csignal>
#include <memory>

#include <spdlog/spdlog.h>

#include "k3lab/core/ledger.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "runner_stages.hpp"

namespace k3lab::experiments {
namespace {

extern "C" void on_stop_signal(int) { stop_flag().store(true); }

// The manifest's data_parallel entry (null for one process; a submission says what its tasks will run).
nlohmann::json data_parallel_layout(const core::PeerGroup* group, const core::LaunchEnvironment& launch,
                                    const RunRequest& request) {
  if (!group) return request.planned_data_parallel;
  return {{"world_size", group->world_size()}, {"launcher", launch.launcher}, {"backend", group->backend()},
          {"device", group->device_name()}};
}

// Rank 0 (or the only process) once the run dir is chosen: plan record, unit selection, the unit loop.
RunSummary run_in_dir(Experiment& experiment, const stages::Design& design, const RunRequest& request,
                      core::PeerGroup* group, stages::PeerPlan& peer_plan, stages::ChosenRunDir chosen) {
  const core::RunDirInfo& run = chosen.run;
  RunSummary summary;
  summary.planned = design.units.size();
  summary.run_dir = run.path;
  core::LedgerWriter writer(run.path, request.worker);
  if (writer.repaired_torn_line()) {
    spdlog::warn("{}: a torn last ledger line was cut and kept as an artifact", writer.path().string());
  }
  auto ledger = core::read_ledger(run.path);
  stages::write_plan_once(writer, ledger, design);
  chosen.lock.reset();  // the run dir and its plan exist: other commands may choose now
  if (request.plan_only) {
    stages::count_terminal(RunRecords{run.manifest, core::read_ledger(run.path), run.path}.terminal_records(), summary);
    summary.message = run.path.string() + ": planned " + std::to_string(design.units.size()) + " units";
    return summary;
  }
  std::vector<nlohmann::json> terminal = RunRecords{run.manifest, ledger, run.path}.terminal_records();
  auto selected = stages::select_units(design, request, terminal);
  if (auto* refused = std::get_if<RunSummary>(&selected)) return *refused;
  auto todo = std::get<std::vector<const Unit*>>(selected);

  stages::UnitClaims claims(run.path, request.worker,
                            request.lease_settings ? *request.lease_settings : core::lease_settings_from_environment());
  stages::ClaimReport claim_report;
  if (group) {
    // The other ranks train the units named in the plan in step: claim them all before naming them.
    std::erase_if(todo, [&](const Unit* unit) {
      return !stages::claim_for_loop(claims, writer, run.path, unit->id, claim_report);
    });
  }
  nlohmann::json todo_ids = nlohmann::json::array();
  for (const Unit* unit : todo) todo_ids.push_back(unit->id);
  peer_plan.send({{"run_dir", std::filesystem::absolute(run.path).string()}, {"units", todo_ids}});

  stages::run_units({experiment, design, request, group, writer, ledger, claims, claim_report}, todo, terminal, run,
                    summary);
  stages::count_terminal(terminal, summary);
  summary.skipped_leased = claim_report.skipped;
  if (summary.message.empty()) {
    summary.message = run.path.string() + ": " + std::to_string(terminal.size()) + " of " +
                      std::to_string(design.units.size()) + " units finished";
  }
  if (!summary.skipped_leased.empty()) {
    summary.message += "; " + std::to_string(summary.skipped_leased.size()) +
                       " unit(s) skipped because another process holds their lease (first: " +
                       summary.skipped_leased.front() + "); run again once it has ended to pick up what it left";
  }
  stages::flag_duplicate_terminal(core::read_ledger(run.path), run.path, summary);
  return summary;
}

}  // namespace

std::atomic<bool>& stop_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

void install_stop_handlers() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

RunSummary run_experiment(const RunRequest& request) {
  if (!request.experiment_factory) {
    throw std::logic_error("run_experiment needs RunRequest::experiment_factory (the CLI takes it from the registry)");
  }
  auto experiment = request.experiment_factory();
  auto resolved = stages::resolve_design(*experiment, request);
  if (auto* refused = std::get_if<RunSummary>(&resolved)) return *refused;
  const auto& design = std::get<stages::Design>(resolved);

  core::LaunchEnvironment launch;
  auto joined = stages::join_peer_group(*experiment, request, launch);
  if (auto* refused = std::get_if<RunSummary>(&joined)) return *refused;
  const auto group = std::move(std::get<std::unique_ptr<core::PeerGroup>>(joined));
  const stages::Farewell farewell(group.get());
  if (group && !group->is_root()) return stages::run_as_peer(*experiment, design, request, *group);
  stages::PeerPlan peer_plan(group.get());

  auto chosen = stages::choose_run_dir(design, request, data_parallel_layout(group.get(), launch, request));
  if (auto* ended = std::get_if<RunSummary>(&chosen)) return *ended;
  return run_in_dir(*experiment, design, request, group.get(), peer_plan,
                    std::move(std::get<stages::ChosenRunDir>(chosen)));
}

}  // namespace k3lab::experiments
