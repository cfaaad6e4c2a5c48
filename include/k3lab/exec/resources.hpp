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
  std::optional<double> gpu_hours_per_unit;  // the plan's lower-bound estimate, when it has one
  std::size_t max_units_per_task = 1;
};

// Whether a task needs a GPU: --device cuda, or a proxy ablation at the full profile on `auto`.
bool needs_gpu(const ResourceInputs& inputs);

// cpus-per-task (threads, else 8 per GPU task, else 1), gres=gpu:1 for GPU tasks, and for GPU tasks
// with an estimate a time limit of 3x the estimate for the task's units (at least 30 minutes): the
// plans' estimates are lower bounds at an assumed utilisation.
std::vector<SbatchOption> default_resources(const ResourceInputs& inputs);

// GPU hours per unit from `k3lab plan`'s details: estimate.gpu_hours_per_run, else
// estimate.gpu_hours_total / units.
std::optional<double> gpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units);

// Slurm's time format, rounded up to whole minutes: 1.5 -> "0-01:30:00", 30 -> "1-06:00:00".
std::string slurm_time(double hours);

}  // namespace k3lab::exec
