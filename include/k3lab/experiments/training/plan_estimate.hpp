#pragma once
// The GPU-hour estimate `k3lab plan` shows for a proxy-training experiment: 6 x parameters x tokens
// at an assumed share of one measured hardware peak. A lower bound on time, never a budget: each
// module's basis names what it leaves out.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::training {

// A measured peak the estimates may use (DESIGN.md section 8).
struct HardwarePeak {
  const char* device;
  const char* operation;
  double flops_per_second;
};

// The peak every estimate uses: bf16 8192^3 matmul measured at about 795 TFLOP/s on the H200.
inline constexpr HardwarePeak kH200Bf16Matmul{"H200", "bf16 matmul", 795e12};
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

// {total, by_arm, by_seed}: unit counts from the specs' arm and seed.
nlohmann::json runs_by_arm_and_seed(const std::vector<Unit>& units);

}  // namespace k3lab::experiments::training
