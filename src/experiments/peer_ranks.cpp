// Data-parallel commands (docs/slurm.md): every rank runs the same command. Rank 0 does everything a
// single process does; the other ranks train the same units with it and write nothing.
#include <algorithm>

#include "runner_stages.hpp"

namespace k3lab::experiments::stages {

std::variant<std::unique_ptr<core::PeerGroup>, RunSummary> join_peer_group(const Experiment& experiment,
                                                                           const RunRequest& request,
                                                                           core::LaunchEnvironment& launch) {
  // Planning for a scheduler runs no unit, so it is never a rank.
  if (request.plan_only) return std::unique_ptr<core::PeerGroup>();
  try {
    launch = core::launch_environment_from_process();
  } catch (const std::invalid_argument& e) {
    return refusal(kExitUsage, e.what());
  }
  if (launch.world_size <= 1) return std::unique_ptr<core::PeerGroup>();
  const auto& id = request.experiment_id;
  if (!experiment.supports_data_parallel()) {
    return refusal(kExitUsage, id + " runs as one process, but this one is rank " + std::to_string(launch.rank) +
                                   " of " + std::to_string(launch.world_size) + " (" + launch.launcher +
                                   "): data-parallel launches are for the training runners (`k3lab list`); start it "
                                   "once, e.g. srun --ntasks=1");
  }
  if (!request.peer_group_factory) {
    return refusal(kExitUsage, "this build of " + id + " cannot join a data-parallel group (no training layer "
                                   "linked); start it as one process");
  }
  return request.peer_group_factory(launch, request.options.value("device", std::string("auto")));
}

PeerPlan::~PeerPlan() {
  try {
    send({{"stop", true}});
  } catch (const std::exception&) {
  }
}

void PeerPlan::send(const nlohmann::json& plan) {
  if (!group_ || sent_) return;
  sent_ = true;
  group_->share_from_root("plan", plan.dump(), kPeerWait);
}

Farewell::~Farewell() {
  if (!group_ || group_->failure()) return;
  try {
    group_->barrier();
  } catch (const std::exception&) {
  }
}

nlohmann::json rank_failure_note(const std::string& unit, const core::PeerGroup& group, const std::string& detail) {
  return {{"kind", "note"},       {"unit", unit},       {"note", "rank-failure"}, {"rank", group.rank()},
          {"world_size", group.world_size()}, {"detail", detail}};
}

namespace {

// One unit in step with rank 0; false when this rank must stop (interrupted, or rank 0 said so).
bool train_in_step(Experiment& experiment, const Unit& unit, RunEnv& env, core::PeerGroup& group, std::size_t index,
                   const std::string& who, RunSummary& summary) {
  try {
    experiment.run_unit(unit, env);  // rank 0 records the outcome
    ++summary.ran_now;
  } catch (const core::RankFailure&) {
    throw;
  } catch (const std::exception&) {
    if (stop_flag().load()) {
      summary.exit_code = kExitInterrupted;
      summary.message = who + ": interrupted inside unit " + unit.id;
      return false;
    }
  }
  return group.share_from_root("unit-" + std::to_string(index), "", kPeerWait) == "continue";
}

}  // namespace

RunSummary run_as_peer(Experiment& experiment, const Design& design, const RunRequest& request, core::PeerGroup& group) {
  RunSummary summary;
  summary.planned = design.units.size();
  const std::string who = "rank " + std::to_string(group.rank()) + " of " + std::to_string(group.world_size());
  const auto plan = nlohmann::json::parse(group.share_from_root("plan", "", kPeerWait));
  if (plan.contains("stop")) {
    summary.message = who + ": rank 0 runs no unit (its output says why)";
    return summary;
  }
  // summary.run_dir stays empty: this rank's summary has no records to count.
  const std::filesystem::path run_dir = plan.at("run_dir").get<std::string>();
  RunEnv env{design.protocol, design.parameters, request.profile, run_dir, run_dir / "artifacts", design.frozen,
             request.options, nullptr, nullptr, &stop_flag()};
  env.distributed = &group;
  const auto ids = plan.at("units").get<std::vector<std::string>>();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto unit = std::find_if(design.units.begin(), design.units.end(), [&](const Unit& u) { return u.id == ids[i]; });
    if (unit == design.units.end()) {
      throw std::runtime_error(who + ": rank 0 names unit " + ids[i] + ", which this rank's plan lacks");
    }
    try {
      if (!train_in_step(experiment, *unit, env, group, i, who, summary)) break;
    } catch (const core::RankFailure& e) {
      if (!group.root_reachable()) {
        const std::string shard = (request.worker.empty() ? "" : request.worker + "-") + "rank-" + std::to_string(group.rank());
        core::LedgerWriter(run_dir, shard).append(rank_failure_note(unit->id, group, e.what()));
      }
      summary.exit_code = kExitError;
      summary.message = who + ": " + e.what();
      break;
    }
  }
  if (summary.message.empty()) {
    summary.message = who + ": trained " + std::to_string(summary.ran_now) + " units of " + run_dir.string() +
                      "; rank 0 records them";
  }
  return summary;
}

}  // namespace k3lab::experiments::stages
