#pragma once
// The GPU-hour estimate `k3lab plan` shows for a proxy-training experiment: 6 x parameters x tokens
// at an assumed share of one measured hardware peak. A lower bound on time, never a budget: each
// module's basis names what it leaves out. Per arm, the plan also carries the shape `k3lab bench
// train` measures (measured_estimate.hpp turns a matching throughput record into hours), and the
// evaluation cadence's cost as a share of training.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/models/training_memory.hpp"
#include "k3lab/train/bench.hpp"
#include "k3lab/train/hardware_peak.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::experiments::training {

// The peak every estimate uses (one definition, shared with `k3lab bench train`).
using train::HardwarePeak;
using train::kH200Bf16Matmul;
// The share of that peak a small model's training step is assumed to reach.
inline constexpr double kAssumedUtilisation = 0.40;

struct GpuHours {
  double flops = 0;
  double gpu_hours = 0;
};

// 6 x parameters x tokens, and the hours it takes at the assumed share of the peak.
GpuHours gpu_hours(double parameters, double tokens);

// "<counted> at 40% of the 795 TFLOP/s bf16 matmul rate measured on one H200; <not_counted>".
std::string estimate_basis(const std::string& counted, const std::string& not_counted);

// What a per-run estimate counts: the parameters (and the key they are shown under, or none), the
// tokens of one run, and the basis's two halves.
struct RunCost {
  std::string parameters_key = {};  // e.g. "approximate_parameters"; empty: not shown
  double parameters = 0;
  double tokens_per_run = 0;
  std::string not_counted;
  std::string counted = "6 x parameters x tokens";
};

// {<parameters_key>, flops_per_run, gpu_hours_per_run, gpu_hours_total, basis} for `runs` runs.
nlohmann::json per_run_estimate(const RunCost& cost, std::size_t runs);

// Sets the plan details' "training_tokens_total" (runs x tokens per run) and
// "estimate" (per_run_estimate).
void add_run_estimate(nlohmann::json& details, const RunCost& cost, std::size_t runs);

// One arm's line of the plan's GPU-hour table: its runs and tokens, the parameters of the floor, and
// the shape `k3lab bench train` measures for it (or why the benchmark cannot build its model).
struct ArmCost {
  std::string arm;
  std::size_t runs = 0;
  double tokens_per_run = 0;
  double parameters = 0;
  train::BenchShape bench;
  std::optional<models::TrainingMemory> memory;  // one training step at the protocol's micro-batch
};

// An arm fits a device when its step's estimated peak is at most this share of the device's memory:
// the rest is for the allocator's caching and fragmentation and the CUDA context.
inline constexpr double kMemoryHeadroom = 0.9;

// {memory..., device, device_memory_bytes, fits} for the plan's device (the H200).
nlohmann::json memory_plan_json(const models::TrainingMemory& memory);

// The memory plan of a trainer arm (DecoderLM), or nullopt when its configuration cannot be built.
std::optional<models::TrainingMemory> trainer_memory(const std::function<train::TrainerConfig()>& make);

// The first arm of plan details' gpu_hours_by_arm whose step cannot fit `device_bytes` (with the
// headroom above), as a refusal that names the fix; nullopt when every arm fits. `lanes` gives, for an
// arm's micro-batch rows, how many micro-batches train side by side (train/micro_batch_lanes.hpp):
// each lane beyond the first holds its own activations and largest transient, and with lanes every
// lane keeps its gradients apart until they are added.
std::optional<std::string> memory_refusal(const nlohmann::json& plan_details, double device_bytes,
                                          const std::string& device_name,
                                          const std::function<int(std::int64_t micro_batch_rows)>& lanes);

// details["gpu_hours_by_arm"]: [{arm, runs, tokens_per_run, floor_gpu_hours_per_run, shape (or null),
// unmeasured_reason (when null)}]; measured_estimate.hpp adds the measured figures and the basis.
nlohmann::json arm_costs_json(const std::vector<ArmCost>& arms);

// A part of the evaluation cadence: what it is, the protocol fields that set its size, and the tokens
// it runs over all runs (forward only: 2 x parameters FLOPs a token; with a backward: 6).
struct EvaluationPart {
  std::string what;
  std::vector<std::string> fields;
  double tokens = 0;
  double flops_per_token_per_parameter = 2;
};

// Evaluation over all runs, set against training over all runs (the same parameters).
struct EvaluationCost {
  double parameters = 0;
  double training_tokens = 0;
  std::size_t runs = 0;
  std::vector<EvaluationPart> parts;
};

// ArmCost for each arm: its runs counted from the units' "arm", the same tokens and parameters, and
// shape_of(arm).
std::vector<ArmCost> arm_costs(const std::vector<std::string>& arms, const std::vector<Unit>& units,
                               double tokens_per_run, double parameters,
                               const std::function<train::BenchShape(const std::string&)>& shape_of);

// details["gpu_hours_by_arm"] for arms that train with the shared trainer: arm_costs_json of arm_costs
// with each arm's bench shape from trainer_bench_shape(config_of(arm)).
nlohmann::json trainer_arm_costs_json(const std::vector<std::string>& arms, const std::vector<Unit>& units,
                                      double tokens_per_run, double parameters,
                                      const std::function<train::TrainerConfig(const std::string&)>& config_of);

// The cost figures of a plan whose arms all train with the shared trainer for `cost.tokens_per_run`
// tokens a run: the floor (add_run_estimate), each arm's GPU-hours and memory
// (trainer_arm_costs_json of config_of) and the evaluation cadence's cost (evaluation_cost_json).
void add_trainer_costs(nlohmann::json& details, const RunCost& cost, const std::vector<std::string>& arms,
                       const std::vector<Unit>& units,
                       const std::function<train::TrainerConfig(const std::string&)>& config_of,
                       const EvaluationCost& evaluation);

// The bench shape of the trainer config `make` builds (its model, sequence length and resolved
// micro-batch rows); when building it throws, no shape and the error as the reason.
train::BenchShape trainer_bench_shape(const std::function<train::TrainerConfig()>& make);

// Evaluation above this share of training time prints a warning naming the fields that drive it.
inline constexpr double kEvaluationShareWarning = 0.10;

// The trainer's validation loss at every evaluation point: validation_tokens forward per
// eval_interval_tokens of the `training_tokens`.
EvaluationPart validation_loss_part(const TokenSchedule& schedule, double training_tokens);

// The downstream suite's scorings over `scored_runs` runs (forward only), or nothing without a suite.
std::vector<EvaluationPart> downstream_parts(const DownstreamBlock& block, double scored_runs, std::int64_t max_length);

// details["evaluation_cost"]: {forward_tokens_per_run, flops_per_run, gpu_hours_per_run,
// gpu_hours_total (at the floor's rate), share_of_training, parts, basis, warning (above the share)}.
nlohmann::json evaluation_cost_json(const EvaluationCost& cost);

// {total, by_arm, by_seed}: unit counts from the specs' arm and seed.
nlohmann::json runs_by_arm_and_seed(const std::vector<Unit>& units);

}  // namespace k3lab::experiments::training
