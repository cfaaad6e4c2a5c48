#pragma once
// What Slurm says about the tasks of a job array: parsed from `sacct` (when accounting is on) or
// from `scontrol show job` (slurmctld's memory of recent jobs), and classified by what it means for
// the unit a task was running.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "k3lab/exec/command.hpp"

namespace k3lab::exec {

// One array task (or a plain job when `task` is empty) as the scheduler reports it.
struct TaskState {
  std::string job_id;                // the array's job id (SLURM_ARRAY_JOB_ID)
  std::optional<std::size_t> task;   // SLURM_ARRAY_TASK_ID
  std::string job_name;
  std::string state;                 // first word of the state: "CANCELLED by 0" -> "CANCELLED"
  std::string exit_code;             // "exit:signal", e.g. "0:9"; empty when not reported
  std::string node;                  // where it ran ("" when not yet placed)
};

// How a task's end bears on the unit it was running.
enum class TaskEnd {
  Active,       // queued, running, requeued or suspended: it may still write results
  Completed,    // the k3lab process exited 0
  Interrupted,  // cancelled, preempted, deadline, boot failure, or FAILED (k3lab's own error exit, or a
                // kill from outside Slurm): like a local interruption, its unfinished unit runs again
  UnitFatal,    // the unit died with its task: NODE_FAIL, TIMEOUT or OUT_OF_MEMORY; its unfinished unit
                // gets a failure record
  Unknown,      // Slurm does not know the job (purged without accounting, or the id was reused)
};

TaskEnd classify(const TaskState& state);
std::string to_string(TaskEnd end);

// Parses `sacct -X -P -n --format=JobID,JobName,State,ExitCode,NodeList` output. Job steps
// ("123_4.batch") are skipped; not-yet-started tasks ("123_[5-9%2]") are expanded one per index.
// Throws std::runtime_error naming the line when a line has the wrong shape.
std::vector<TaskState> parse_sacct(const std::string& text);

// Parses `scontrol -o show job <id>` output (one job record per line, key=value words).
std::vector<TaskState> parse_scontrol(const std::string& text);

// Expands an array index list such as "5", "2-3", "[1,4-6%2]" into indices.
std::vector<std::size_t> expand_array_indices(const std::string& spec);

using TaskKey = std::pair<std::string, std::size_t>;  // (job id, array index)

struct TaskStates {
  std::map<TaskKey, TaskState> tasks;
  std::string source;               // "sacct", "scontrol", "sacct+scontrol" or "" when nothing answered
  std::vector<std::string> notes;   // why a source was not used ("sacct: accounting storage is disabled")
  const TaskState* find(const std::string& job_id, std::size_t task) const;
};

// Asks sacct about every job id, then scontrol about any job sacct did not report.
TaskStates query_task_states(const CommandRunner& runner, const std::vector<std::string>& job_ids);

// MaxArraySize from `scontrol show config` (1001, Slurm's default, when it cannot be read).
std::size_t max_array_size(const CommandRunner& runner);

}  // namespace k3lab::exec
