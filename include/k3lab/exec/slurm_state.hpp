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

// How a task's end bears on the unit it was running. The mapping from Slurm's states and k3lab's exit
// codes is one table each (slurm_state_table, exit_code_table), shown in docs/slurm.md.
enum class TaskEnd {
  Active,       // queued, running, requeued or suspended: it may still write results
  Completed,    // the k3lab process exited 0
  Interrupted,  // the machine or the scheduler ended it (NODE_FAIL, TIMEOUT, PREEMPTED, CANCELLED, a kill,
                // k3lab's exit 1 or 130...): its unfinished unit stays pending, with a note in the ledger,
                // and runs again once no live lease covers it
  OutOfMemory,  // OUT_OF_MEMORY: an outcome where the protocol says so (a training unit's arm failure,
                // TaskEndRules::oom_is_outcome), otherwise like Interrupted
  NeedsPerson,  // FAILED with one of k3lab's deterministic exit codes (usage, protocol, window rule, runner
                // missing): running it again gives the same error; resubmission refuses until a person acts
  Unknown,      // Slurm does not know the job (purged without accounting, or the id was reused)
};

struct SlurmStateRule {
  const char* state;
  TaskEnd end;
  const char* meaning;  // what it means for the unit, for status and docs
};
// Every Slurm job state k3lab knows, with what it means. A state not listed is Unknown.
const std::vector<SlurmStateRule>& slurm_state_table();

struct ExitCodeRule {
  int code;
  bool deterministic;   // the same command fails the same way: NeedsPerson
  const char* meaning;
};
// k3lab's exit codes (experiments::ExitCode) as a Slurm task's end sees them.
const std::vector<ExitCodeRule>& exit_code_table();

// The exit status of Slurm's "exit:signal" field ("3:0" -> 3); nullopt when absent or unreadable.
std::optional<int> exit_status(const std::string& exit_code);

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
