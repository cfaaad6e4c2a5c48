#pragma once
// The sbatch script of one submission: a job array over the run's pending units, one ledger shard
// per array task, resource requests as #SBATCH lines.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace k3lab::exec {

// One sbatch long option: "--name=value", or "--name" when value is empty.
struct SbatchOption {
  std::string name;
  std::string value;
  bool operator==(const SbatchOption&) const = default;
};

// Parses --slurm-opt items: "partition=gpu", "--partition=gpu", "--exclusive". Throws
// std::invalid_argument for short forms, options k3lab sets itself (array, requeue...) and values
// that would break the script (newlines, quotes).
std::vector<SbatchOption> parse_slurm_options(const std::vector<std::string>& items);

// `defaults` with every option of the same name replaced by `overrides` (overrides keep their order
// after the remaining defaults).
std::vector<SbatchOption> merge_options(const std::vector<SbatchOption>& defaults,
                                        const std::vector<SbatchOption>& overrides);

// Sorted, de-duplicated indices as Slurm's --array list: {0,1,2,5,7,8} -> "0-2,5,7-8".
std::string array_ranges(std::vector<std::size_t> indices);

// Single-quoted for bash (a ' becomes '\'').
std::string shell_quote(const std::string& text);

// The ledger shard name of one array task: ledger.<worker>.jsonl.
std::string task_worker_name(const std::string& job_id, std::size_t task);

enum class TaskLayout {
  PerUnit,  // array index = the unit's position in the frozen plan; the task runs --unit <id>
  Shards,   // array index i of n; the task runs --shard i/n (units whose plan position % n == i)
};

struct ArrayTask {
  std::size_t index = 0;
  std::vector<std::string> units;  // the units it is expected to run (pending when submitted)
};

struct SbatchScriptSpec {
  std::string experiment_id;
  std::string profile;
  std::filesystem::path run_dir;       // absolute: the tasks run on other hosts
  std::filesystem::path k3lab_binary;  // absolute, on storage the compute nodes see
  std::filesystem::path workdir;       // absolute: the submit directory (--chdir)
  std::filesystem::path protocol_dir;  // absolute: exported as K3LAB_PROTOCOL_DIR
  std::vector<std::string> run_arguments;  // passed to every task's `k3lab run` (--unfrozen, --set ...)
  TaskLayout layout = TaskLayout::PerUnit;
  std::size_t shard_count = 0;  // Shards: n
  std::vector<ArrayTask> tasks;
  // Everything but --array and --(no-)requeue: job name, output, resources (defaults merged with
  // --slurm-opt), in order.
  std::vector<SbatchOption> options;
  bool requeue = false;
  // Above 1: each task is one data-parallel training run; `srun` starts this many ranks of `k3lab
  // run` (rank 0 writes the ledger, docs/slurm.md) after exporting MASTER_ADDR and MASTER_PORT.
  std::size_t ranks_per_task = 1;
  // How the resources were derived (the plan's estimate, the safety timeout), written as comments.
  std::vector<std::string> resource_notes;
};

// srun's --wait for data-parallel tasks: once one rank has exited, the others are killed after this many
// seconds, and --kill-on-bad-exit ends the step at once when a rank exits non-zero (a dead or hung peer
// is detected within K3LAB_DIST_TIMEOUT by the survivors, which exit 1).
inline constexpr int kRankExitWaitSeconds = 120;

// Ranks per array task that `options` ask for: ntasks, else ntasks-per-node x nodes, else 1.
// Throws std::invalid_argument for counts that are not plain positive integers (e.g. nodes=1-2).
std::size_t ranks_per_task(const std::vector<SbatchOption>& options);

// The complete script text. Throws std::invalid_argument when the spec is inconsistent (no tasks,
// relative paths, a shard index >= n).
std::string render_sbatch_script(const SbatchScriptSpec& spec);

}  // namespace k3lab::exec
