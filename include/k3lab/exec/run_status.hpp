#pragma once
// Where every unit of a run stands, from its ledger shards, its Slurm submissions and what Slurm
// says about their tasks; and the failure records owed for units that died with their task.
// Both are pure functions of their inputs (tests feed canned scheduler answers).
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/exec/slurm_jobs.hpp"
#include "k3lab/exec/slurm_state.hpp"

namespace k3lab::exec {

enum class UnitPhase {
  Result,   // terminal: result
  Invalid,  // terminal: invalid (excluded with a reason)
  Failed,   // terminal: failure (including Slurm NODE_FAIL/TIMEOUT/OUT_OF_MEMORY records)
  Running,  // its Slurm task is running it now
  Queued,   // its Slurm task is pending, or running another unit of its shard
  Pending,  // no terminal record and no live task: the next submission (or local run) runs it
};
std::string to_string(UnitPhase phase);

struct UnitStatus {
  std::string unit;
  UnitPhase phase = UnitPhase::Pending;
  std::string task;    // "12_3" when a Slurm task owns or owned it
  std::string note;    // failure reason, "task 12_3 ended CANCELLED", "not started"...
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

  std::size_t count(UnitPhase phase) const;
  nlohmann::json to_json() const;
};

// The Slurm state of one task of a recorded job, or null when Slurm does not know it or reports a
// different job name under that id (a reused id).
const TaskState* task_state(const JobRecord& job, std::size_t task, const TaskStates& states);

RunStatus compute_status(const std::vector<std::string>& plan_units, const std::vector<nlohmann::json>& records,
                         const std::vector<JobRecord>& jobs, const TaskStates& states);

// For each task that ended UnitFatal: the failure record of the unit it was running (its last
// attempt without a terminal record). Records carry kind, unit, reason ("slurm:<STATE>"), detail,
// worker and slurm {job_id, task, state, exit_code, node}; the caller adds the unit's spec.
std::vector<nlohmann::json> slurm_failure_records(const std::vector<nlohmann::json>& records,
                                                  const std::vector<JobRecord>& jobs, const TaskStates& states);

// Every recorded job id, oldest first, without repeats.
std::vector<std::string> job_ids(const std::vector<JobRecord>& jobs);

}  // namespace k3lab::exec
