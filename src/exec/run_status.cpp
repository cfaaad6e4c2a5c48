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

// What the task's end means, from the one table (slurm_state_table / exit_code_table).
std::string meaning(const TaskState& state) {
  if (classify(state) == TaskEnd::NeedsPerson || state.state == "FAILED") {
    const auto status = exit_status(state.exit_code);
    for (const auto& code : exit_code_table()) {
      if (status && *status == code.code) return "exit " + std::to_string(code.code) + ": " + code.meaning;
    }
  }
  for (const auto& rule : slurm_state_table()) {
    if (state.state == rule.state) return rule.meaning;
  }
  return "a state k3lab does not know";
}

std::string ended(const std::string& label, const TaskState& state) {
  return "task " + label + " ended " + state.state +
         (state.exit_code.empty() || state.exit_code == "0:0" ? "" : " (exit " + state.exit_code + ")");
}

struct Owner {
  const JobRecord* job = nullptr;
  std::size_t task = 0;
};

// The latest submission that was given a unit owns it.
std::map<std::string, Owner> owners(const std::vector<JobRecord>& jobs) {
  std::map<std::string, Owner> owner;
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      for (const auto& u : t.units) owner[u] = {&job, t.index};
    }
  }
  return owner;
}

nlohmann::json slurm_fields(const JobRecord& job, std::size_t task, const TaskState& state) {
  return {{"job_id", job.job_id}, {"task", task}, {"state", state.state}, {"exit_code", state.exit_code},
          {"node", state.node}};
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
    case UnitPhase::Blocked: return "blocked";
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
                     UnitPhase::Pending, UnitPhase::Blocked}) {
    c[to_string(phase)] = count(phase);
  }
  j["counts"] = c;
  j["units"] = nlohmann::json::array();
  for (const auto& u : units) {
    j["units"].push_back({{"unit", u.unit}, {"phase", to_string(u.phase)}, {"task", u.task}, {"note", u.note},
                          {"lease", u.lease}, {"attempts", u.attempts}});
  }
  j["tasks"] = nlohmann::json::array();
  for (const auto& t : tasks) {
    j["tasks"].push_back({{"job_id", t.job_id}, {"task", t.index}, {"state", t.state}, {"end", to_string(t.end)},
                          {"exit_code", t.exit_code}, {"node", t.node}, {"log", t.log}, {"units", t.units},
                          {"unfinished", t.unfinished}});
  }
  j["scheduler_source"] = scheduler_source;
  j["notes"] = notes;
  j["duplicates"] = duplicates;
  j["needs_person"] = needs_person;
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

namespace {

// The phase of a unit without a terminal record: its live lease first (a process runs it, whatever
// Slurm says), then its task's state.
void open_unit_phase(UnitStatus& u, const std::map<std::string, Owner>& owner, const LedgerView& view,
                     const TaskStates& states, const LeaseViews& leases) {
  const auto own = owner.find(u.unit);
  const TaskState* state = own == owner.end() ? nullptr : task_state(*own->second.job, own->second.task, states);
  const TaskEnd end = state ? classify(*state) : TaskEnd::Unknown;
  const auto lease = leases.find(u.unit);
  if (lease != leases.end() && lease->second.state == core::LeaseState::Live) {
    u.phase = UnitPhase::Running;
    u.lease = lease->second.describe();
    u.note = u.lease;
    if (state && end != TaskEnd::Active) {
      u.note += "; " + ended(u.task, *state) + " in Slurm's view, but its lease is live: it stays running until "
                "the lease expires, then it is pending";
    }
    return;
  }
  if (own == owner.end()) {
    u.phase = UnitPhase::Pending;
    u.note = u.attempts > 0 ? "started, not finished (interrupted; no live lease)" : "not started";
    return;
  }
  const auto last = view.last_attempt_worker.find(u.unit);
  const bool attempted_by_task = last != view.last_attempt_worker.end() &&
                                 last->second == task_worker_name(own->second.job->job_id, own->second.task);
  if (end == TaskEnd::Active) {
    u.phase = (state->state == "RUNNING" && attempted_by_task) ? UnitPhase::Running : UnitPhase::Queued;
    u.note = "task " + u.task + " " + state->state;
    return;
  }
  u.phase = end == TaskEnd::NeedsPerson ? UnitPhase::Blocked : UnitPhase::Pending;
  u.note = state ? ended(u.task, *state) + ": " + meaning(*state) : "task " + u.task + " is unknown to Slurm now";
}

}  // namespace

RunStatus compute_status(const std::vector<std::string>& plan_units, const std::vector<nlohmann::json>& records,
                         const std::vector<JobRecord>& jobs, const TaskStates& states, const LeaseViews& leases) {
  const LedgerView view = view_of(records);
  RunStatus status;
  status.scheduler_source = states.source;
  status.notes = states.notes;
  core::LedgerContents contents;
  contents.records = records;
  status.duplicates = core::describe_duplicates(core::duplicate_terminal_records(contents));
  status.needs_person = needs_person_blocks(records, jobs);

  const auto owner = owners(jobs);
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
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
    } else {
      open_unit_phase(u, owner, view, states, leases);
    }
    ++status.counts[u.phase];
    status.units.push_back(std::move(u));
  }
  return status;
}

std::vector<nlohmann::json> slurm_failure_records(const std::vector<nlohmann::json>& records,
                                                  const std::vector<JobRecord>& jobs, const TaskStates& states,
                                                  const TaskEndRules& rules, const LeaseViews& leases) {
  const LedgerView view = view_of(records);
  std::vector<nlohmann::json> failures;
  if (!rules.oom_is_outcome) return failures;
  std::set<std::string> owed;
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      const TaskState* state = task_state(job, t.index, states);
      if (!state || classify(*state) != TaskEnd::OutOfMemory) continue;
      const std::string worker = task_worker_name(job.job_id, t.index);
      const auto last = view.last_attempt_of.find(worker);
      if (last == view.last_attempt_of.end()) continue;  // it died before starting a unit: nothing was lost
      const std::string unit = last->second->value("unit", "");
      const auto lease = leases.find(unit);
      if (lease != leases.end() && lease->second.state == core::LeaseState::Live) continue;
      if (view.terminal.count(unit) || !owed.insert(unit).second) continue;
      const std::string label = task_label(job.job_id, t.index);
      failures.push_back(
          {{"kind", "failure"},
           {"unit", unit},
           {"reason", "slurm:" + state->state},
           {"detail", "array task " + label + " ended " + state->state + (state->node.empty() ? "" : " on " + state->node) +
                          " while running this unit (attempt " + std::to_string(last->second->value("attempt", 0)) +
                          "): the unit exceeded its memory, which this protocol counts as a failure of its arm. Raise "
                          "--slurm-opt mem=... only for a new run: this record stands"},
           {"worker", worker},
           {"slurm", slurm_fields(job, t.index, *state)}});
    }
  }
  return failures;
}

namespace {

bool note_recorded(const std::vector<nlohmann::json>& records, const nlohmann::json& note) {
  return std::any_of(records.begin(), records.end(), [&](const nlohmann::json& r) {
    return r.value("kind", "") == "note" && r.value("note", "") == note["note"] && r.contains("slurm") &&
           r["slurm"].value("job_id", "") == note["slurm"]["job_id"] && r["slurm"].value("task", -1) == note["slurm"]["task"] &&
           r["slurm"].value("state", "") == note["slurm"]["state"] && r.value("unit", "") == note.value("unit", "");
  });
}

}  // namespace

std::vector<nlohmann::json> slurm_end_notes(const std::vector<nlohmann::json>& records,
                                            const std::vector<JobRecord>& jobs, const TaskStates& states,
                                            const TaskEndRules& rules) {
  const LedgerView view = view_of(records);
  std::vector<nlohmann::json> notes;
  for (const auto& job : jobs) {
    for (const auto& t : job.tasks) {
      const TaskState* state = task_state(job, t.index, states);
      if (!state) continue;
      const TaskEnd end = classify(*state);
      const std::string label = task_label(job.job_id, t.index);
      nlohmann::json note;
      if (end == TaskEnd::NeedsPerson) {
        std::vector<std::string> open;
        for (const auto& u : t.units) {
          if (!view.terminal.count(u)) open.push_back(u);
        }
        note = {{"kind", "note"}, {"note", "slurm-task-needs-person"}, {"units", open},
                {"detail", ended(label, *state) + ": " + meaning(*state) + ". Fix the cause (its log: " +
                               job.log_of(t.index) + "), then submit again with --resubmit-errors"}};
      } else if (end == TaskEnd::Interrupted || (end == TaskEnd::OutOfMemory && !rules.oom_is_outcome)) {
        const auto last = view.last_attempt_of.find(task_worker_name(job.job_id, t.index));
        if (last == view.last_attempt_of.end()) continue;
        const std::string unit = last->second->value("unit", "");
        if (view.terminal.count(unit)) continue;
        note = {{"kind", "note"}, {"note", "slurm-task-ended"}, {"unit", unit},
                {"detail", ended(label, *state) + " while running this unit: " + meaning(*state) +
                               ". Not an outcome: the unit stays pending"}};
      } else {
        continue;
      }
      note["slurm"] = slurm_fields(job, t.index, *state);
      if (!note_recorded(records, note)) notes.push_back(std::move(note));
    }
  }
  return notes;
}

std::vector<std::string> needs_person_blocks(const std::vector<nlohmann::json>& records,
                                             const std::vector<JobRecord>& jobs) {
  const LedgerView view = view_of(records);
  const auto owner = owners(jobs);
  std::vector<std::string> blocks;
  std::set<std::string> seen;
  for (const auto& r : records) {
    if (r.value("kind", "") != "note" || r.value("note", "") != "slurm-task-needs-person" || !r.contains("slurm")) continue;
    const std::string job_id = r["slurm"].value("job_id", "");
    const std::size_t task = r["slurm"].value("task", std::size_t{0});
    bool still_owns = false;
    for (const auto& u : r.value("units", std::vector<std::string>{})) {
      const auto own = owner.find(u);
      still_owns = still_owns || (!view.terminal.count(u) && own != owner.end() &&
                                  own->second.job->job_id == job_id && own->second.task == task);
    }
    if (still_owns && seen.insert(task_label(job_id, task)).second) blocks.push_back(r.value("detail", ""));
  }
  return blocks;
}

}  // namespace k3lab::exec
