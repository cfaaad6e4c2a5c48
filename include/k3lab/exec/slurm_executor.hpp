#pragma once
// `k3lab run <id> --executor slurm` and `k3lab status <run dir>`: plan the run dir on the submit
// host, record what Slurm says about earlier submissions (a unit that died with its task becomes a
// failure record), and submit one sbatch job array over the units without a terminal record.
// docs/slurm.md describes the whole design.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/exec/command.hpp"
#include "k3lab/exec/run_status.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/runner.hpp"

namespace k3lab::exec {

struct SlurmSubmitOptions {
  std::vector<std::string> slurm_options;  // --slurm-opt items ("partition=gpu", "--time=04:00:00")
  std::optional<std::size_t> shard_count;  // --shard N: N array tasks, task i runs --shard i/N
  bool requeue = true;                     // --requeue (default): let Slurm requeue preempted/failed-node tasks
  bool resubmit_errors = false;            // --resubmit-errors: a person fixed what made earlier tasks exit 2-4
  bool dry_run = false;                    // plan the run dir and print the script; submit nothing
  std::filesystem::path k3lab_binary;      // default: this executable
  CommandRunner runner;                    // default: run_command (tests answer with canned outputs)
  // Applied to the plan's details before the tasks' time limit is derived: the CLI prices the arms
  // from `k3lab bench train` records as `k3lab plan` does, so a measured rate replaces the floor.
  std::function<void(nlohmann::json& plan_details)> refine_plan_details;
};

struct SubmitResult {
  int exit_code = experiments::kExitOk;
  std::filesystem::path run_dir;
  std::string job_id;  // empty when nothing was submitted
  std::string script;  // the script text (submitted, or printed by --dry-run)
  std::filesystem::path script_path;
  std::size_t planned = 0;
  std::size_t finished = 0;  // units with a terminal record before this submission
  std::size_t submitted_units = 0;
  std::size_t tasks = 0;
  std::size_t failures_recorded = 0;  // Slurm failures of earlier tasks recorded now
  std::vector<std::string> skipped_leased;  // pending units left out: a live lease covers them
  std::string message;
};

// Plans (or resumes) the run dir exactly as `k3lab run` would, records Slurm failures of earlier
// tasks, and submits the pending units that no live lease covers. Refuses (exit 1) while an earlier
// task of this run dir is still queued or running, and while a task that ended with a deterministic
// error (exit 2-4) still owns units, unless resubmit_errors. `request.shard` and `request.worker` must
// be empty: tasks choose theirs.
SubmitResult submit_to_slurm(const experiments::RunRequest& request, const SlurmSubmitOptions& options);

// The `k3lab run` arguments every task repeats so that it resolves the same design: --unfrozen,
// --set, and the execution options (base_url, threads, device). Throws std::invalid_argument for an
// option it cannot pass on.
std::vector<std::string> task_run_arguments(const experiments::RunRequest& request);

struct StatusOptions {
  CommandRunner runner;         // default: run_command
  bool record_failures = true;  // append failure records owed for tasks that died with their unit
  experiments::Catalog catalog;  // the modules that enumerate a run's units (the registry in k3lab)
};

struct StatusResult {
  RunStatus status;
  nlohmann::json manifest;
  std::size_t planned = 0;
  std::size_t failures_recorded = 0;
  std::vector<JobRecord> jobs;
  std::string window_stop;  // the window rule's reason when the run is stopped
};

StatusResult run_dir_status(const std::filesystem::path& run_dir, const StatusOptions& options);

}  // namespace k3lab::exec
