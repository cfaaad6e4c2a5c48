#pragma once
// Where every unit of a run stands, from its ledger shards, its Slurm submissions and what Slurm
// says about their tasks; and the failure records owed for units that died with their task.
// Both are pure functions of their inputs (tests feed canned scheduler answers).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/unit_lease.hpp"
#include "k3lab/exec/slurm_jobs.hpp"
#include "k3lab/exec/slurm_state.hpp"

namespace k3lab::exec {

enum class UnitPhase {
  Result,   // terminal: result
  Invalid,  // terminal: invalid (excluded with a reason)
  Failed,   // terminal: failure (including OUT_OF_MEMORY of a training unit, recorded from Slurm)
  Running,  // a live lease covers it (its process runs it), or its Slurm task is running it now
  Queued,   // its Slurm task is pending, or running another unit of its shard
  Pending,  // no terminal record, no live lease, no live task: the next submission (or local run) runs it
  Blocked,  // its task ended with a deterministic error (exit 2-4): a person must fix the cause first
};
std::string to_string(UnitPhase phase);

struct UnitStatus {
  std::string unit;
  UnitPhase phase = UnitPhase::Pending;
  std::string task;    // "12_3" when a Slurm task owns or owned it
  std::string note;    // failure reason, "task 12_3 ended CANCELLED", "not started"...
  std::string lease;   // who holds its live lease, when one does
  int attempts = 0;
};

struct TaskStatus {
  std::string job_id;
  std::size_t index = 0;
  std::string state;  // Slurm's word, or "UNKNOWN" when Slurm does not know the task
  TaskEnd end = TaskEnd::Unknown;
  std::string exit_code;
  std::string node;
  std::string log;
  std::size_t units = 0;       // units it was given
  std::size_t unfinished = 0;  // of those, units without a terminal record now
};

struct RunStatus {
  std::vector<UnitStatus> units;  // in plan order, then units not in the plan
  std::map<UnitPhase, std::size_t> counts;
  std::vector<TaskStatus> tasks;  // every task of every submission, oldest first
  std::string scheduler_source;   // "sacct", "scontrol", ... ("" when Slurm was not asked)
  std::vector<std::string> notes;
  std::vector<std::string> duplicates;    // core::describe_duplicates: units with two terminal records
  std::vector<std::string> needs_person;  // tasks that ended with a deterministic error, and why

  std::size_t count(UnitPhase phase) const;
  nlohmann::json to_json() const;
};

// The Slurm state of one task of a recorded job, or null when Slurm does not know it or reports a
// different job name under that id (a reused id).
const TaskState* task_state(const JobRecord& job, std::size_t task, const TaskStates& states);

// The leases that matter to status: unit -> its lease as this host sees it (Live or Stale ones).
using LeaseViews = std::map<std::string, core::LeaseView>;

// What the run's protocol says about Slurm end states that can be outcomes (slurm_state_table).
struct TaskEndRules {
  bool oom_is_outcome = false;  // a training protocol: OUT_OF_MEMORY is a failure of the unit's arm
};

RunStatus compute_status(const std::vector<std::string>& plan_units, const std::vector<nlohmann::json>& records,
                         const std::vector<JobRecord>& jobs, const TaskStates& states, const LeaseViews& leases = {});

// For each task that ended in an outcome (OUT_OF_MEMORY under oom_is_outcome): the failure record of
// the unit it was running (its last attempt without a terminal record), unless a live lease covers the
// unit. Records carry kind, unit, reason ("slurm:<STATE>"), detail, worker and slurm {job_id, task,
// state, exit_code, node}; the caller adds the unit's spec.
std::vector<nlohmann::json> slurm_failure_records(const std::vector<nlohmann::json>& records,
                                                  const std::vector<JobRecord>& jobs, const TaskStates& states,
                                                  const TaskEndRules& rules, const LeaseViews& leases = {});

// The non-terminal notes owed for tasks that ended without an outcome: "slurm-task-ended" for the unit
// each was running (it stays pending), and "slurm-task-needs-person" for a task that ended with a
// deterministic error (the mark that makes resubmission refuse). Notes already in `records` are not
// owed again.
std::vector<nlohmann::json> slurm_end_notes(const std::vector<nlohmann::json>& records,
                                            const std::vector<JobRecord>& jobs, const TaskStates& states,
                                            const TaskEndRules& rules);

// The needs-person marks in `records` that still matter: the task is the latest owner of a unit without a
// terminal record. One line each: "task 12_3 exit 3:0 (the protocol is invalid...): log <file>".
std::vector<std::string> needs_person_blocks(const std::vector<nlohmann::json>& records,
                                             const std::vector<JobRecord>& jobs);

// Every recorded job id, oldest first, without repeats.
std::vector<std::string> job_ids(const std::vector<JobRecord>& jobs);

}  // namespace k3lab::exec
