#include "k3lab/experiments/runner.hpp"

#include <chrono>
#include <csignal>
#include <map>
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

namespace k3lab::experiments {
namespace {

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

  core::Progress progress(protocol.id, units.size(), done.size());
  RunEnv env{protocol, parameters, request.profile, run->path, run->path / "artifacts", frozen, request.options,
             nullptr, nullptr, &stop_flag()};
  const std::string worker = request.worker;
  env.note = [&writer, frozen](const std::string& unit, nlohmann::json record) {
    record["unit"] = unit;
    if (!frozen) record["unfrozen"] = true;
    writer.append(std::move(record));
  };
  env.progress = [&progress](double f) { progress.within_unit(f); };

  for (const Unit* unit : todo) {
    if (stop_flag().load()) {
      summary.exit_code = kExitInterrupted;
      summary.message = "interrupted; finished units are kept. Run the same command again to resume";
      break;
    }
    const int attempt = ++attempts[unit->id];
    nlohmann::json attempt_record = {{"kind", "attempt"}, {"unit", unit->id}, {"attempt", attempt}};
    if (!worker.empty()) attempt_record["worker"] = worker;
    writer.append(attempt_record);

    UnitOutcome outcome;
    const auto started = std::chrono::steady_clock::now();
    try {
      outcome = experiment->run_unit(*unit, env);
    } catch (const std::bad_alloc&) {
      outcome = UnitOutcome::failure("oom", "out of memory while running the unit");
    } catch (const std::exception& e) {
      if (stop_flag().load()) {
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
