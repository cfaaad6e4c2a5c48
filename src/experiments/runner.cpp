#include "k3lab/experiments/runner.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <new>
#include <set>

#include <spdlog/spdlog.h>

#include "k3lab/core/freeze.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/progress.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/train/device.hpp"
#include "k3lab/train/distributed.hpp"

namespace k3lab::experiments {
namespace {

// How long the other ranks of a data-parallel run wait for rank 0's work alone (choosing the run dir,
// a unit's final measurements and records). A dead rank 0 ends the wait at once (its store is gone).
constexpr std::chrono::hours kPeerWait{24};

extern "C" void on_stop_signal(int) { stop_flag().store(true); }

std::string outcome_kind(UnitOutcome::Kind kind) {
  switch (kind) {
    case UnitOutcome::Kind::Result: return "result";
    case UnitOutcome::Kind::Invalid: return "invalid";
    case UnitOutcome::Kind::Failure: return "failure";
  }
  return "failure";
}

nlohmann::json parse_override_value(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    return text;
  }
}

RunSummary fail(int code, std::string message) {
  RunSummary s;
  s.exit_code = code;
  s.message = std::move(message);
  return s;
}

void count(const std::vector<nlohmann::json>& terminal, RunSummary& s) {
  s.results = s.invalid = s.failures = 0;
  for (const auto& r : terminal) {
    const auto kind = r.value("kind", "");
    if (kind == "result") ++s.results;
    else if (kind == "invalid") ++s.invalid;
    else ++s.failures;
  }
}

// Rank 0's word to the other ranks, sent once: the run dir and the units to train, or that there are
// none. The destructor sends "none" on every way out before the units (they wait for it).
class PeerPlan {
 public:
  explicit PeerPlan(train::DistributedContext* group) : group_(group) {}
  ~PeerPlan() {
    try {
      send({{"stop", true}});
    } catch (const std::exception&) {
    }
  }
  void send(const nlohmann::json& plan) {
    if (!group_ || sent_) return;
    sent_ = true;
    group_->share_from_root("plan", plan.dump(), kPeerWait);
  }

 private:
  train::DistributedContext* group_;
  bool sent_ = false;
};

// Every rank leaves together: rank 0 serves the store, and a peer still reading its last message
// would take rank 0's exit for a death. Skipped once the group has broken.
class Farewell {
 public:
  explicit Farewell(train::DistributedContext* group) : group_(group) {}
  ~Farewell() {
    if (!group_ || group_->failure()) return;
    try {
      group_->barrier();
    } catch (const std::exception&) {
    }
  }

 private:
  train::DistributedContext* group_;
};

// A rank failure leaves the unit open (a rerun resumes it from its checkpoint) and is noted: by rank 0
// in the ledger, or by a surviving rank in its own shard when rank 0 is the one gone.
nlohmann::json rank_failure_note(const std::string& unit, const train::DistributedContext& group, const std::string& detail) {
  return {{"kind", "note"},       {"unit", unit},       {"note", "rank-failure"}, {"rank", group.rank()},
          {"world_size", group.world_size()}, {"detail", detail}};
}

// Ranks other than 0: train the units rank 0 names, one at a time in step with it, and write nothing.
RunSummary run_as_peer(Experiment& experiment, const core::Protocol& protocol, const nlohmann::json& parameters,
                       const std::vector<Unit>& units, const RunRequest& request, bool frozen,
                       train::DistributedContext& group) {
  RunSummary summary;
  summary.planned = units.size();
  const std::string who = "rank " + std::to_string(group.rank()) + " of " + std::to_string(group.world_size());
  const auto plan = nlohmann::json::parse(group.share_from_root("plan", "", kPeerWait));
  if (plan.contains("stop")) {
    summary.message = who + ": rank 0 runs no unit (its output says why)";
    return summary;
  }
  // summary.run_dir stays empty: this rank's summary has no records to count.
  const std::filesystem::path run_dir = plan.at("run_dir").get<std::string>();
  RunEnv env{protocol, parameters, request.profile, run_dir, run_dir / "artifacts", frozen,
             request.options, nullptr, nullptr, &stop_flag()};
  env.distributed = &group;
  const auto ids = plan.at("units").get<std::vector<std::string>>();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto unit = std::find_if(units.begin(), units.end(), [&](const Unit& u) { return u.id == ids[i]; });
    if (unit == units.end()) throw std::runtime_error(who + ": rank 0 names unit " + ids[i] + ", which this rank's plan lacks");
    try {
      try {
        experiment.run_unit(*unit, env);  // rank 0 records the outcome
        ++summary.ran_now;
      } catch (const train::RankFailure&) {
        throw;
      } catch (const std::exception&) {
        if (stop_flag().load()) {
          summary.exit_code = kExitInterrupted;
          summary.message = who + ": interrupted inside unit " + unit->id;
          break;
        }
      }
      if (group.share_from_root("unit-" + std::to_string(i), "", kPeerWait) != "continue") break;
    } catch (const train::RankFailure& e) {
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

bool window_stopped(const core::LedgerContents& ledger, std::string* reason) {
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") == "window" && r.value("stop", false)) {
      if (reason) *reason = r.value("reason", "");
      return true;
    }
  }
  return false;
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

void apply_overrides(nlohmann::json& parameters, const std::vector<std::string>& overrides) {
  for (const auto& item : overrides) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw std::invalid_argument("--set expects key=value (e.g. --set traces_per_mix=2), got \"" + item + "\"");
    }
    const std::string key = item.substr(0, eq);
    nlohmann::json* node = &parameters;
    std::size_t start = 0;
    std::string walked;
    for (;;) {
      const auto dot = key.find('.', start);
      const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (!node->is_object() || !node->contains(part)) {
        std::vector<std::string> candidates;
        if (node->is_object()) {
          for (auto it = node->begin(); it != node->end(); ++it) candidates.push_back(it.key());
        }
        std::string message = "--set " + key + ": no parameter \"" + part + "\"" +
                              (walked.empty() ? "" : " under \"" + walked + "\"");
        if (auto guess = core::did_you_mean(part, candidates)) message += "; did you mean \"" + *guess + "\"?";
        throw std::invalid_argument(message + " (`k3lab plan <id> --json` lists the parameters)");
      }
      node = &(*node)[part];
      walked += (walked.empty() ? "" : ".") + part;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    *node = parse_override_value(item.substr(eq + 1));
  }
}

std::string design_hash(const std::string& protocol_hash, const nlohmann::json& parameters) {
  return core::sha256_hex(protocol_hash + "\n" + parameters.dump());
}

RunSummary run_experiment(const RunRequest& request) {
  auto experiment = request.experiment_factory ? request.experiment_factory() : make_experiment(request.experiment_id);
  const auto protocol = core::load_protocol(request.protocol_file.value_or(core::protocol_path(request.experiment_id)),
                                            &experiment->parameter_schema());
  if (!experiment->has_runner()) {
    return fail(kExitNotBuilt, request.experiment_id + ": the runner for this experiment is not built yet; `k3lab plan " +
                                   request.experiment_id + "` shows its frozen ledger");
  }
  const auto freeze = core::check_freeze(protocol);
  if (!freeze.frozen && !request.unfrozen) return fail(kExitProtocol, "refusing to run: " + freeze.explanation);
  const bool frozen = freeze.frozen && !request.unfrozen && request.set_overrides.empty();

  nlohmann::json parameters = protocol.parameters_for(request.profile);
  if (!request.set_overrides.empty()) {
    if (!request.unfrozen) {
      return fail(kExitProtocol, "--set changes the frozen design; add --unfrozen to run a development variant "
                                 "(every record and report page is then marked NOT FROZEN)");
    }
    apply_overrides(parameters, request.set_overrides);
    auto issues = experiment->parameter_schema().validate(parameters, "parameters");
    if (!issues.empty()) {
      std::string message = "--set produced invalid parameters:";
      for (const auto& i : issues) message += "\n  " + i.path + ": " + i.message;
      return fail(kExitProtocol, message);
    }
  }
  const std::string design = design_hash(protocol.hash(), parameters);
  const auto units = experiment->enumerate(protocol, parameters);
  const auto labels = experiment->run_labels(request.options);
  if (!request.plan_only) {
    if (const auto problem = experiment->preflight(parameters, request.options)) {
      return fail(kExitError, "cannot start: " + *problem + "; nothing was recorded");
    }
  }

  // Data parallel (docs/slurm.md): every rank runs this same command. Rank 0 does everything a single
  // process does; the other ranks train the same units with it and write nothing. Planning for a
  // scheduler runs no unit, so it is never a rank.
  train::LaunchEnvironment launch;
  try {
    if (!request.plan_only) launch = train::launch_environment_from_process();
  } catch (const std::invalid_argument& e) {
    return fail(kExitUsage, e.what());
  }
  std::unique_ptr<train::DistributedContext> group;
  if (launch.world_size > 1) {
    if (!experiment->supports_data_parallel()) {
      return fail(kExitUsage, request.experiment_id + " runs as one process, but this one is rank " +
                                  std::to_string(launch.rank) + " of " + std::to_string(launch.world_size) + " (" +
                                  launch.launcher + "): data-parallel launches are for the training runners "
                                  "(`k3lab list`); start it once, e.g. srun --ntasks=1");
    }
    group = std::make_unique<train::DistributedContext>(
        launch, train::resolve_device(request.options.value("device", std::string("auto"))));
  }
  const Farewell farewell(group.get());
  if (group && !group->is_root()) return run_as_peer(*experiment, protocol, parameters, units, request, frozen, *group);
  PeerPlan peer_plan(group.get());

  // Choose the run dir: an explicit one, the latest of this experiment and profile, or a new one.
  std::optional<core::RunDirInfo> run;
  if (request.run_dir) {
    run = core::RunDirInfo{*request.run_dir, core::read_manifest(*request.run_dir)};
  } else if (!request.fresh) {
    run = core::latest_run_dir(request.runs_root, request.experiment_id, request.profile);
  }
  RunSummary summary;
  summary.planned = units.size();
  if (run) {
    const auto ledger = core::read_ledger(run->path);
    const bool has_results = !core::finished_units(ledger).empty();
    if (run->manifest.value("design_sha256", "") != design) {
      if (has_results || request.run_dir) {
        return fail(kExitProtocol,
                    "refusing to resume " + run->path.string() +
                        ": its protocol/parameters differ from the current ones and it already holds results. "
                        "Restore the protocol it was run with, or start a separate run with --fresh");
      }
      run.reset();  // an untouched run of an older design: leave it, start anew
    } else {
      const bool unfrozen_run = run->manifest.value("unfrozen", false);
      if (unfrozen_run != !frozen) {
        return fail(kExitProtocol, run->path.string() + " was started " +
                                       (unfrozen_run ? "with --unfrozen" : "frozen") +
                                       "; resume it the same way, or start a separate run with --fresh");
      }
      std::string stopped_reason;
      const auto done = core::finished_units(ledger);
      std::set<std::string> done_set(done.begin(), done.end());
      std::size_t remaining = 0;
      for (const auto& u : units) remaining += done_set.count(u.id) ? 0 : 1;
      if (window_stopped(ledger, &stopped_reason) || (remaining == 0 && request.only_units.empty() && !request.shard)) {
        summary.run_dir = run->path;
        summary.already_complete = true;
        RunRecords records{run->manifest, ledger, run->path};
        count(records.terminal_records(), summary);
        summary.message = run->path.string() + (stopped_reason.empty()
                                                    ? " is complete (" + std::to_string(units.size()) + " units)"
                                                    : " was stopped by its window rule: " + stopped_reason) +
                          "; nothing to do. `k3lab report` renders it; --fresh starts a new run";
        return summary;
      }
    }
  }
  if (!run) {
    nlohmann::json manifest;
    manifest["experiment"] = protocol.id;
    manifest["title"] = protocol.title;
    manifest["evidence_class"] = protocol.evidence_class;
    manifest["profile"] = request.profile;
    manifest["protocol_sha256"] = protocol.hash();
    manifest["design_sha256"] = design;
    manifest["frozen"] = frozen;
    manifest["unfrozen"] = !frozen;
    manifest["freeze_record"] = freeze.record ? freeze.record->to_json() : nlohmann::json(nullptr);
    manifest["set_overrides"] = request.set_overrides;
    manifest["protocol"] = protocol.document;
    manifest["parameters"] = parameters;
    manifest["units_planned"] = units.size();
    manifest["labels"] = labels;
    manifest["options"] = request.options;
    manifest["provenance"] = core::provenance(protocol.path.parent_path(), request.argv);
    if (group) {
      manifest["data_parallel"] = {{"world_size", group->world_size()}, {"launcher", launch.launcher},
                                   {"backend", group->backend()}, {"device", group->device().str()}};
    }
    run = core::create_run_dir(request.runs_root, request.experiment_id, manifest);
    spdlog::info("{}: new run {}", request.experiment_id, run->path.string());
  } else {
    spdlog::info("{}: resuming {}", request.experiment_id, run->path.string());
  }
  summary.run_dir = run->path;

  core::LedgerWriter writer(run->path, request.worker);
  if (writer.repaired_torn_line()) spdlog::warn("{}: a torn last ledger line was cut and kept as an artifact", writer.path().string());
  auto ledger = core::read_ledger(run->path);
  bool has_plan = false;
  for (const auto& r : ledger.records) has_plan = has_plan || r.value("kind", "") == "plan";
  if (!has_plan) {
    nlohmann::json ids = nlohmann::json::array();
    for (const auto& u : units) ids.push_back(u.id);
    writer.append({{"kind", "plan"}, {"units", ids}, {"count", units.size()}, {"design_sha256", design}});
  }
  if (request.plan_only) {
    RunRecords planned{run->manifest, core::read_ledger(run->path), run->path};
    count(planned.terminal_records(), summary);
    summary.message = run->path.string() + ": planned " + std::to_string(units.size()) + " units";
    return summary;
  }

  RunRecords records{run->manifest, ledger, run->path};
  auto terminal = records.terminal_records();
  std::set<std::string> done;
  for (const auto& r : terminal) done.insert(r["unit"].get<std::string>());
  std::map<std::string, int> attempts;
  for (const auto& r : ledger.records) {
    if (r.value("kind", "") == "attempt") ++attempts[r.value("unit", "")];
  }

  std::vector<const Unit*> todo;
  const std::set<std::string> only(request.only_units.begin(), request.only_units.end());
  for (std::size_t i = 0; i < units.size(); ++i) {
    const auto& u = units[i];
    if (done.count(u.id)) continue;
    if (!only.empty() && !only.count(u.id)) continue;
    if (request.shard && i % request.shard->second != request.shard->first) continue;
    todo.push_back(&u);
  }
  for (const auto& wanted : only) {
    bool known = false;
    for (const auto& u : units) known = known || u.id == wanted;
    if (!known) return fail(kExitUsage, "--unit " + wanted + " is not a unit of " + protocol.id + " (`k3lab plan " + protocol.id + " --units` lists them)");
  }

  nlohmann::json todo_ids = nlohmann::json::array();
  for (const Unit* unit : todo) todo_ids.push_back(unit->id);
  peer_plan.send({{"run_dir", std::filesystem::absolute(run->path).string()}, {"units", todo_ids}});

  core::Progress progress(protocol.id, units.size(), done.size());
  RunEnv env{protocol, parameters, request.profile, run->path, run->path / "artifacts", frozen, request.options,
             nullptr, nullptr, &stop_flag()};
  env.distributed = group.get();
  // The other ranks wait between units while rank 0 measures and records alone.
  auto release_peers = [&](std::size_t index, bool more) {
    if (group) group->share_from_root("unit-" + std::to_string(index), more ? "continue" : "stop", kPeerWait);
  };
  const std::string worker = request.worker;
  env.note = [&writer, frozen](const std::string& unit, nlohmann::json record) {
    record["unit"] = unit;
    if (!frozen) record["unfrozen"] = true;
    writer.append(std::move(record));
  };
  env.progress = [&progress](double f) { progress.within_unit(f); };

  for (std::size_t index = 0; index < todo.size(); ++index) {
    const Unit* unit = todo[index];
    if (stop_flag().load()) {
      summary.exit_code = kExitInterrupted;
      summary.message = "interrupted; finished units are kept. Run the same command again to resume";
      break;
    }
    const int attempt = ++attempts[unit->id];
    nlohmann::json attempt_record = {{"kind", "attempt"}, {"unit", unit->id}, {"attempt", attempt}};
    if (!worker.empty()) attempt_record["worker"] = worker;
    if (group) attempt_record["world_size"] = group->world_size();
    writer.append(attempt_record);

    UnitOutcome outcome;
    const auto started = std::chrono::steady_clock::now();
    try {
      outcome = experiment->run_unit(*unit, env);
    } catch (const std::bad_alloc&) {
      outcome = UnitOutcome::failure("oom", "out of memory while running the unit");
    } catch (const train::RankFailure& e) {
      if (!group) throw;
      writer.append(rank_failure_note(unit->id, *group, e.what()));
      release_peers(index, false);
      summary.exit_code = kExitError;
      summary.message = "a data-parallel rank failed in unit " + unit->id + " (" + e.what() +
                        "); it stays open: run the same command again to resume it";
      break;
    } catch (const std::exception& e) {
      if (stop_flag().load()) {
        release_peers(index, false);
        summary.exit_code = kExitInterrupted;
        summary.message = "interrupted inside unit " + unit->id + "; it will be run again on resume";
        break;
      }
      outcome = UnitOutcome::failure("exception", e.what());
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    nlohmann::json record = {{"kind", outcome_kind(outcome.kind)}, {"unit", unit->id}, {"spec", unit->spec},
                             {"data", outcome.data}};
    if (!outcome.reason.empty()) record["reason"] = outcome.reason;
    if (!outcome.detail.empty()) record["detail"] = outcome.detail;
    nlohmann::json timing = outcome.timing.is_object() ? outcome.timing : nlohmann::json::object();
    timing["unit_seconds"] = seconds;
    record["timing"] = timing;
    if (!labels.empty()) record["labels"] = labels;
    if (!frozen) record["unfrozen"] = true;
    if (!worker.empty()) record["worker"] = worker;
    terminal.push_back(writer.append(record));
    ++summary.ran_now;
    progress.advance();

    const auto verdict = experiment->check_window(protocol, parameters, terminal);
    release_peers(index, !verdict.stop && !stop_flag().load());
    if (verdict.stop) {
      writer.append({{"kind", "window"}, {"stop", true}, {"reason", verdict.reason}, {"data", verdict.data}});
      summary.exit_code = kExitWindowStopped;
      summary.message = "the window rule stopped this run: " + verdict.reason;
      break;
    }
  }
  progress.finish();
  count(terminal, summary);
  if (summary.message.empty()) {
    summary.message = run->path.string() + ": " + std::to_string(terminal.size()) + " of " +
                      std::to_string(units.size()) + " units finished";
  }
  return summary;
}

}  // namespace k3lab::experiments
