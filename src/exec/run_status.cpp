#include "k3lab/exec/run_status.hpp"

#include <algorithm>
#include <set>

#include "k3lab/core/ledger.hpp"

namespace k3lab::exec {
namespace {

struct LedgerView {
  std::map<std::string, const nlohmann::json*> terminal;          // last one wins, as in reports
  std::map<std::string, int> attempts;
  std::map<std::string, std::string> last_attempt_worker;         // unit -> worker of its last attempt
  std::map<std::string, const nlohmann::json*> last_attempt_of;   // worker -> its last attempt record
};

LedgerView view_of(const std::vector<nlohmann::json>& records) {
  LedgerView view;
  for (const auto& r : records) {
    if (!r.contains("unit") || !r["unit"].is_string()) continue;
    const std::string kind = r.value("kind", "");
    const std::string unit = r["unit"].get<std::string>();
    if (core::is_terminal_kind(kind)) {
      view.terminal[unit] = &r;
    } else if (kind == "attempt") {
      const std::string worker = r.value("worker", "");
      ++view.attempts[unit];
      view.last_attempt_worker[unit] = worker;
      view.last_attempt_of[worker] = &r;
    }
  }
  return view;
}

std::string task_label(const std::string& job_id, std::size_t task) { return job_id + "_" + std::to_string(task); }

std::string why(const TaskState& state) {
  if (state.state == "NODE_FAIL") return "its node failed";
  if (state.state == "TIMEOUT") return "it reached its time limit (raise --slurm-opt time=... when resubmitting)";
  if (state.state == "OUT_OF_MEMORY") return "it exceeded its memory (raise --slurm-opt mem=... when resubmitting)";
  return "Slurm ended it";
}

}  // namespace

std::string to_string(UnitPhase phase) {
  switch (phase) {
    case UnitPhase::Result: return "result";
    case UnitPhase::Invalid: return "invalid";
    case UnitPhase::Failed: return "failed";
    case UnitPhase::Running: return "running";
    case UnitPhase::Queued: return "queued";
    case UnitPhase::Pending: return "pending";
  }
  return "pending";
}

std::size_t RunStatus::count(UnitPhase phase) const {
  const auto it = counts.find(phase);
  return it == counts.end() ? 0 : it->second;
}

nlohmann::json RunStatus::to_json() const {
  nlohmann::json j;
  nlohmann::json c = nlohmann::json::object();
  for (auto phase : {UnitPhase::Result, UnitPhase::Invalid, UnitPhase::Failed, UnitPhase::Running, UnitPhase::Queued,
                     UnitPhase::Pending}) {
    c[to_string(phase)] = count(phase);
  }
  j["counts"] = c;
  j["units"] = nlohmann::json::array();
  for (const auto& u : units) {
    j["units"].push_back({{"unit", u.unit}, {"phase", to_string(u.phase)}, {"task", u.task}, {"note", u.note},
                          {"attempts", u.attempts}});
  }
  j["tasks"] = nlohmann::json::array();
  for (const auto& t : tasks) {
    j["tasks"].push_back({{"job_id", t.job_id}, {"task", t.index}, {"state", t.state}, {"end", to_string(t.end)},
                          {"exit_code", t.exit_code}, {"node", t.node}, {"log", t.log}, {"units", t.units},
                          {"unfinished", t.unfinished}});
  }
  j["scheduler_source"] = scheduler_source;
  j["notes"] = notes;
  return j;
}

const TaskState* task_state(const JobRecord& job, std::size_t task, const TaskStates& states) {
  const TaskState* state = states.find(job.job_id, task);
  if (state && !job.job_name.empty() && !state->job_name.empty() && state->job_name != job.job_name) return nullptr;
  return state;
}

std::vector<std::string> job_ids(const std::vector<JobRecord>& jobs) {
  std::vector<std::string> ids;
  std::set<std::string> seen;
  for (const auto& j : jobs) {
    if (seen.insert(j.job_id).second) ids.push_back(j.job_id);
  }
  return ids;
}

RunStatus compute_status(const std::vector<std::string>& plan_units, const std::vector<nlohmann::json>& records,
                         const std::vector<JobRecord>& jobs, const TaskStates& states) {
  const LedgerView view = view_of(records);
  RunStatus status;
  status.scheduler_source = states.source;
  status.notes = states.notes;

  // The latest submission that was given a unit owns it.
  struct Owner {
    const JobRecord* job;
    std::size_t task;
  };
  std::map<std::string, Owner> owner;
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      for (const auto& u : t.units) owner[u] = {&job, t.index};
      const TaskState* state = task_state(job, t.index, states);
      TaskStatus ts;
      ts.job_id = job.job_id;
      ts.index = t.index;
      ts.state = state ? state->state : "UNKNOWN";
      ts.end = state ? classify(*state) : TaskEnd::Unknown;
      ts.exit_code = state ? state->exit_code : "";
      ts.node = state ? state->node : "";
      ts.log = job.log_of(t.index);
      ts.units = t.units.size();
      ts.unfinished = static_cast<std::size_t>(std::count_if(
          t.units.begin(), t.units.end(), [&](const std::string& u) { return !view.terminal.count(u); }));
      status.tasks.push_back(std::move(ts));
    }
  }

  std::vector<std::string> order = plan_units;
  std::set<std::string> in_plan(plan_units.begin(), plan_units.end());
  for (const auto& [unit, record] : view.terminal) {
    if (!in_plan.count(unit)) order.push_back(unit);  // a unit outside the plan: show it, never hide it
  }
  for (const auto& unit : order) {
    UnitStatus u;
    u.unit = unit;
    if (const auto a = view.attempts.find(unit); a != view.attempts.end()) u.attempts = a->second;
    const auto own = owner.find(unit);
    if (own != owner.end()) u.task = task_label(own->second.job->job_id, own->second.task);
    if (const auto t = view.terminal.find(unit); t != view.terminal.end()) {
      const std::string kind = t->second->value("kind", "");
      u.phase = kind == "result" ? UnitPhase::Result : kind == "invalid" ? UnitPhase::Invalid : UnitPhase::Failed;
      u.note = t->second->value("reason", "");
    } else if (own != owner.end()) {
      const auto& [job, task] = own->second;
      const TaskState* state = task_state(*job, task, states);
      const TaskEnd end = state ? classify(*state) : TaskEnd::Unknown;
      const auto last = view.last_attempt_worker.find(unit);
      const bool attempted_by_task = last != view.last_attempt_worker.end() &&
                                     last->second == task_worker_name(job->job_id, task);
      if (end == TaskEnd::Active) {
        u.phase = (state->state == "RUNNING" && attempted_by_task) ? UnitPhase::Running : UnitPhase::Queued;
        u.note = "task " + u.task + " " + state->state;
      } else {
        u.phase = UnitPhase::Pending;
        u.note = state ? "task " + u.task + " ended " + state->state + (state->exit_code.empty() || state->exit_code == "0:0" ? "" : " (exit " + state->exit_code + ")")
                       : "task " + u.task + " is unknown to Slurm now";
        if (end == TaskEnd::UnitFatal && attempted_by_task) u.note += "; its failure record is written by `k3lab status`";
      }
    } else {
      u.phase = UnitPhase::Pending;
      u.note = u.attempts > 0 ? "started, not finished (interrupted, or running in another process)" : "not started";
    }
    ++status.counts[u.phase];
    status.units.push_back(std::move(u));
  }
  return status;
}

std::vector<nlohmann::json> slurm_failure_records(const std::vector<nlohmann::json>& records,
                                                  const std::vector<JobRecord>& jobs, const TaskStates& states) {
  const LedgerView view = view_of(records);
  std::vector<nlohmann::json> failures;
  std::set<std::string> owed;
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      const TaskState* state = task_state(job, t.index, states);
      if (!state || classify(*state) != TaskEnd::UnitFatal) continue;
      const std::string worker = task_worker_name(job.job_id, t.index);
      const auto last = view.last_attempt_of.find(worker);
      if (last == view.last_attempt_of.end()) continue;  // it died before starting a unit: nothing was lost
      const std::string unit = last->second->value("unit", "");
      if (view.terminal.count(unit) || !owed.insert(unit).second) continue;
      const std::string label = task_label(job.job_id, t.index);
      nlohmann::json record = {
          {"kind", "failure"},
          {"unit", unit},
          {"reason", "slurm:" + state->state},
          {"detail", "array task " + label + " ended " + state->state + (state->node.empty() ? "" : " on " + state->node) +
                         " while running this unit (attempt " + std::to_string(last->second->value("attempt", 0)) +
                         "): " + why(*state) + ". Recorded as the unit's failure; it counts under the protocol's "
                         "invalid-run rule and is not run again"},
          {"worker", worker},
          {"slurm", {{"job_id", job.job_id}, {"task", t.index}, {"state", state->state},
                     {"exit_code", state->exit_code}, {"node", state->node}}}};
      failures.push_back(std::move(record));
    }
  }
  return failures;
}

}  // namespace k3lab::exec
