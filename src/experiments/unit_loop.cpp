// The unit loop: one attempt record, one run_unit, one terminal record per unit, then the window rule.
#include <chrono>
#include <map>
#include <new>

#include "k3lab/core/allocator_policy.hpp"
#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/core/progress.hpp"
#include "k3lab/core/resume_refused.hpp"
#include "k3lab/experiments/fault_class.hpp"
#include "runner_stages.hpp"

namespace k3lab::experiments::stages {
namespace {

std::string outcome_kind(UnitOutcome::Kind kind) {
  switch (kind) {
    case UnitOutcome::Kind::Result: return "result";
    case UnitOutcome::Kind::Invalid: return "invalid";
    case UnitOutcome::Kind::Failure: return "failure";
  }
  return "failure";
}

nlohmann::json terminal_record(const UnitLoop& loop, const Unit& unit, const UnitOutcome& outcome, double seconds) {
  nlohmann::json record = {{"kind", outcome_kind(outcome.kind)}, {"unit", unit.id}, {"spec", unit.spec},
                           {"data", outcome.data}};
  if (!outcome.reason.empty()) record["reason"] = outcome.reason;
  if (!outcome.detail.empty()) record["detail"] = outcome.detail;
  nlohmann::json timing = outcome.timing.is_object() ? outcome.timing : nlohmann::json::object();
  timing["unit_seconds"] = seconds;
  record["timing"] = timing;
  if (!loop.design.labels.empty()) record["labels"] = loop.design.labels;
  if (!loop.design.frozen) record["unfrozen"] = true;
  if (!loop.request.worker.empty()) record["worker"] = loop.request.worker;
  return record;
}

// The outcome of one unit, or nullopt when the command must stop with the unit left open (`summary`
// then says why): an interruption, or a failed data-parallel rank.
std::optional<UnitOutcome> attempt_unit(const UnitLoop& loop, const Unit& unit, RunEnv& env,
                                        const std::function<void()>& release_peers, RunSummary& summary) {
  try {
    return loop.experiment.run_unit(unit, env);
  } catch (const std::bad_alloc&) {
    return UnitOutcome::failure("oom", "out of memory while running the unit");
  } catch (const core::RankFailure& e) {
    if (!loop.group) throw;
    loop.writer.append(rank_failure_note(unit.id, *loop.group, e.what()));
    release_peers();
    summary.exit_code = kExitError;
    summary.message = "a data-parallel rank failed in unit " + unit.id + " (" + e.what() +
                      "); it stays open: run the same command again to resume it";
    return std::nullopt;
  } catch (const core::ResumeRefused& e) {
    release_peers();
    summary.exit_code = kExitUsage;
    summary.message = "unit " + unit.id + " was not resumed and nothing was recorded for it: " + e.what();
    return std::nullopt;
  } catch (const std::exception& e) {
    if (loop.claims.lost(unit.id)) {
      release_peers();
      return std::nullopt;  // the caller says why
    }
    if (stop_flag().load()) {
      release_peers();
      summary.exit_code = kExitInterrupted;
      summary.message = "interrupted inside unit " + unit.id + "; it will be run again on resume";
      return std::nullopt;
    }
    const auto fault = classify_exception(e);
    if (!fault.environmental) return UnitOutcome::failure(fault.reason, e.what());
    release_peers();
    summary.exit_code = kExitError;
    summary.message = "unit " + unit.id + " stopped by a fault of the machine (" + fault.reason + ": " + e.what() +
                      "); nothing was recorded for it. Fix the cause (free disk space, check the device) and run "
                      "the same command again: it redoes or resumes the unit";
    return std::nullopt;
  }
}

// The lease of `unit` went to another process (this one was stopped, or outlived its lease): it must
// not write the unit's terminal record, the new holder will.
void lease_lost(const UnitLoop& loop, const Unit& unit, RunSummary& summary) {
  const auto view = loop.claims.table().view(unit.id, loop.claims.holder().token);
  summary.exit_code = kExitError;
  summary.message = "the lease of unit " + unit.id + " was taken over (" + view.describe() +
                    ") while this process ran it, so its outcome was not recorded: the new holder records the "
                    "unit. This process was stopped or slowed past the lease period (" +
                    std::to_string(loop.claims.table().settings().period_seconds) +
                    " s, K3LAB_LEASE_SECONDS); nothing else needs doing";
}

}  // namespace

void run_units(UnitLoop loop, const std::vector<const Unit*>& todo, std::vector<nlohmann::json>& terminal,
               const core::RunDirInfo& run, RunSummary& summary) {
  std::map<std::string, int> attempts;
  for (const auto& r : loop.ledger.records) {
    if (r.value("kind", "") == "attempt") ++attempts[r.value("unit", "")];
  }
  core::Progress progress(loop.design.protocol.id, loop.design.units.size(), terminal.size());
  // Fed each terminal record once, earlier ones first: the check after a unit does not rescan the run.
  const auto window = loop.experiment.window_rule(loop.design.protocol, loop.design.parameters);
  for (const auto& record : terminal) window->add(record);
  RunEnv env{loop.design.protocol, loop.design.parameters, loop.request.profile, run.path, run.path / "artifacts",
             loop.design.frozen, loop.request.options, nullptr, nullptr, &stop_flag()};
  env.distributed = loop.group;
  const bool frozen = loop.design.frozen;
  env.note = [&writer = loop.writer, frozen](const std::string& unit, nlohmann::json record) {
    record["unit"] = unit;
    if (!frozen) record["unfrozen"] = true;
    writer.append(std::move(record));
  };
  env.progress = [&progress](double f) { progress.within_unit(f); };
  // Every attempt says what it ran on, so a report can tell units of different machines or builds apart
  // (a data-parallel group has already chosen its device).
  const auto hardware = core::hardware_fingerprint(
      loop.group ? loop.group->device_name() : loop.request.options.value("device", std::string("auto")));
  // The other ranks wait between units while rank 0 measures and records alone.
  auto release_peers = [&](std::size_t index, bool more) {
    if (loop.group) loop.group->share_from_root("unit-" + std::to_string(index), more ? "continue" : "stop", kPeerWait);
  };

  for (std::size_t index = 0; index < todo.size(); ++index) {
    const Unit* unit = todo[index];
    if (stop_flag().load()) {
      summary.exit_code = kExitInterrupted;
      summary.message = "interrupted; finished units are kept. Run the same command again to resume";
      break;
    }
    if (!claim_for_loop(loop.claims, loop.writer, run.path, unit->id, loop.claim_report)) continue;
    nlohmann::json attempt_record = {{"kind", "attempt"}, {"unit", unit->id}, {"attempt", ++attempts[unit->id]}};
    if (!loop.request.worker.empty()) attempt_record["worker"] = loop.request.worker;
    if (loop.group) attempt_record["world_size"] = loop.group->world_size();
    attempt_record["hardware"] = hardware;
    loop.writer.append(attempt_record);

    const auto started = std::chrono::steady_clock::now();
    const auto outcome = attempt_unit(loop, *unit, env, [&] { release_peers(index, false); }, summary);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const bool recorded = outcome && loop.claims.finish(unit->id, [&] {
      terminal.push_back(loop.writer.append(terminal_record(loop, *unit, *outcome, seconds)));
      window->add(terminal.back());
    });
    if (!recorded) {
      if (loop.claims.lost(unit->id) || outcome) lease_lost(loop, *unit, summary);
      if (outcome) release_peers(index, false);
      loop.claims.release(unit->id);
      break;
    }
    ++summary.ran_now;
    progress.advance();
    core::release_free_memory();  // the unit's buffers go back to the system (core/allocator_policy.hpp)

    const auto verdict = window->verdict();
    release_peers(index, !verdict.stop && !stop_flag().load());
    if (verdict.stop) {
      loop.writer.append({{"kind", "window"}, {"stop", true}, {"reason", verdict.reason}, {"data", verdict.data}});
      summary.exit_code = kExitWindowStopped;
      summary.message = "the window rule stopped this run: " + verdict.reason;
      break;
    }
  }
  progress.finish();
}

}  // namespace k3lab::experiments::stages
