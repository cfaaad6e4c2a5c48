#pragma once
// Default resource requests of an array task, derived from the protocol and profile being run:
// its evidence class, the training device, and the plan's compute estimate. --slurm-opt overrides
// any of them; partition and account come from --slurm-opt or sbatch's own SBATCH_* variables.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/exec/sbatch_script.hpp"

namespace k3lab::exec {

struct ResourceInputs {
  std::string evidence_class;  // direct-api | proxy-ablation | systems-simulation
  std::string profile;         // full | smoke
  std::string device = "auto"; // run --device: auto | cpu | cuda
  int threads = 0;             // run --threads (0: the protocol's choice)
  std::optional<double> gpu_hours_per_unit;   // the plan's estimate, when it has one
  std::string gpu_hours_basis;                // what it rests on (gpu_hours_basis()); empty: a lower bound
  std::optional<double> cpu_hours_per_unit;   // the plan's CPU estimate, when it has one
  std::optional<double> safety_timeout_hours; // the protocol's safety timeout, when it has one
  std::size_t max_units_per_task = 1;
  std::size_t ranks_per_task = 1;             // data-parallel ranks (from --slurm-opt ntasks...)
};

// Whether a task needs a GPU: --device cuda, or a proxy ablation at the full profile on `auto`.
bool needs_gpu(const ResourceInputs& inputs);

// cpus-per-task (threads, else 8 per GPU task, else 1); GPUs for GPU tasks: gres=gpu:1 for one
// process, gpus-per-task=1 for data-parallel ranks; and a time limit for every task (task_time_limit).
std::vector<SbatchOption> default_resources(const ResourceInputs& inputs);

struct TimeLimit {
  double hours = 0;
  std::string basis;  // how it was derived, printed in the script and by --dry-run
};
// Per unit: 3x the plan's estimate (GPU hours for a GPU task, else CPU hours; the estimates are lower
// bounds), else the protocol's safety timeout, else 2 h; never above the safety timeout (the trainer
// ends a unit there itself). Per task: units x that x 1.1, at least 30 minutes.
TimeLimit task_time_limit(const ResourceInputs& inputs);

// CPU hours per unit from `k3lab plan`'s details: estimated_cpu_seconds (the whole plan) / units.
std::optional<double> cpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units);

// The protocol's safety timeout in hours: a "safety_timeout_hours" number anywhere in `parameters`.
std::optional<double> safety_timeout_hours(const nlohmann::json& parameters);

// GPU hours per unit from `k3lab plan`'s details: with per-arm lines (gpu_hours_by_arm, priced from
// `k3lab bench train` records where one matches) the slowest arm's gpu_hours_per_run, since any task
// may run it; else estimate.gpu_hours_per_run, else estimate.gpu_hours_total / units.
std::optional<double> gpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units);
// What that figure rests on: "measured throughput of the slowest arm, <arm>" when every arm line is
// measured, "a floor for at least one arm" when some are not; "" without per-arm lines (a lower bound).
std::string gpu_hours_basis(const nlohmann::json& plan_details);

// Slurm's time format, rounded up to whole minutes: 1.5 -> "0-01:30:00", 30 -> "1-06:00:00".
std::string slurm_time(double hours);

}  // namespace k3lab::exec
