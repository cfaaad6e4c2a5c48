#include "k3lab/exec/resources.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace k3lab::exec {
namespace {

constexpr int kCpusPerGpuTask = 8;             // a common per-GPU CPU share on GPU clusters
constexpr double kEstimateSafetyFactor = 3.0;  // the plans' estimates are lower bounds
constexpr double kMinimumTaskHours = 0.5;
constexpr double kDefaultUnitHours = 2.0;      // no estimate and no safety timeout
constexpr double kTaskSlack = 1.1;             // starting k3lab, reading the protocol, the last records

std::string hours_text(double hours) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3g h", hours);
  return text;
}

}  // namespace

bool needs_gpu(const ResourceInputs& inputs) {
  if (inputs.device == "cuda") return true;
  if (inputs.device == "cpu") return false;
  return inputs.evidence_class == "proxy-ablation" && inputs.profile == "full";
}

std::vector<SbatchOption> default_resources(const ResourceInputs& inputs) {
  const bool gpu = needs_gpu(inputs);
  std::vector<SbatchOption> options;
  const int cpus = inputs.threads > 0 ? inputs.threads : (gpu ? kCpusPerGpuTask : 1);
  options.push_back({"cpus-per-task", std::to_string(cpus)});
  if (gpu) options.push_back(inputs.ranks_per_task > 1 ? SbatchOption{"gpus-per-task", "1"} : SbatchOption{"gres", "gpu:1"});
  options.push_back({"time", slurm_time(task_time_limit(inputs).hours)});
  return options;
}

TimeLimit task_time_limit(const ResourceInputs& inputs) {
  TimeLimit limit;
  double unit_hours = kDefaultUnitHours;
  if (needs_gpu(inputs) && inputs.gpu_hours_per_unit && *inputs.gpu_hours_per_unit > 0) {
    unit_hours = kEstimateSafetyFactor * *inputs.gpu_hours_per_unit;
    limit.basis = "3 x the plan's estimate of " + hours_text(*inputs.gpu_hours_per_unit) + " GPU per unit (" +
                  (inputs.gpu_hours_basis.empty() ? std::string("a lower bound") : inputs.gpu_hours_basis) + ")";
  } else if (inputs.cpu_hours_per_unit && *inputs.cpu_hours_per_unit > 0) {
    unit_hours = kEstimateSafetyFactor * *inputs.cpu_hours_per_unit;
    limit.basis = "3 x the plan's estimate of " + hours_text(*inputs.cpu_hours_per_unit) + " CPU per unit";
  } else if (inputs.safety_timeout_hours && *inputs.safety_timeout_hours > 0) {
    unit_hours = *inputs.safety_timeout_hours;
    limit.basis = "the protocol's safety timeout of " + hours_text(unit_hours) + " per unit (no estimate)";
  } else {
    limit.basis = "no estimate and no safety timeout: " + hours_text(kDefaultUnitHours) + " per unit";
  }
  if (inputs.safety_timeout_hours && *inputs.safety_timeout_hours > 0 && unit_hours > *inputs.safety_timeout_hours) {
    unit_hours = *inputs.safety_timeout_hours;
    limit.basis += ", capped at the protocol's safety timeout of " + hours_text(unit_hours) +
                   " (the trainer ends a unit there itself)";
  }
  const auto units = static_cast<double>(std::max<std::size_t>(1, inputs.max_units_per_task));
  limit.hours = std::max(kMinimumTaskHours, units * unit_hours * kTaskSlack);
  limit.basis += "; x " + std::to_string(static_cast<long long>(units)) + " unit(s) per task x 1.1, at least 30 min -> " +
                 hours_text(limit.hours) + " (override: --slurm-opt time=...)";
  return limit;
}

std::optional<double> cpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units) {
  if (units == 0 || !plan_details.is_object() || !plan_details.contains("estimated_cpu_seconds") ||
      !plan_details["estimated_cpu_seconds"].is_number()) {
    return std::nullopt;
  }
  return plan_details["estimated_cpu_seconds"].get<double>() / 3600.0 / static_cast<double>(units);
}

std::optional<double> safety_timeout_hours(const nlohmann::json& parameters) {
  if (parameters.is_object()) {
    for (auto it = parameters.begin(); it != parameters.end(); ++it) {
      if (it.key() == "safety_timeout_hours" && it->is_number()) return it->get<double>();
      if (auto nested = safety_timeout_hours(*it)) return nested;
    }
  } else if (parameters.is_array()) {
    for (const auto& item : parameters) {
      if (auto nested = safety_timeout_hours(item)) return nested;
    }
  }
  return std::nullopt;
}

namespace {

// The arm line with the most GPU hours per run, or null.
const nlohmann::json* slowest_arm(const nlohmann::json& plan_details) {
  if (!plan_details.is_object() || !plan_details.contains("gpu_hours_by_arm")) return nullptr;
  const nlohmann::json* slowest = nullptr;
  for (const auto& arm : plan_details["gpu_hours_by_arm"]) {
    if (!arm.contains("gpu_hours_per_run") || !arm["gpu_hours_per_run"].is_number()) continue;
    if (!slowest || arm["gpu_hours_per_run"].get<double>() > (*slowest)["gpu_hours_per_run"].get<double>()) {
      slowest = &arm;
    }
  }
  return slowest;
}

}  // namespace

std::string gpu_hours_basis(const nlohmann::json& plan_details) {
  const auto* slowest = slowest_arm(plan_details);
  if (!slowest) return "";
  for (const auto& arm : plan_details["gpu_hours_by_arm"]) {
    if (!arm.contains("measured")) return "a floor for at least one arm: no `k3lab bench train` record matched it";
  }
  return "measured throughput of the slowest arm, " + slowest->value("arm", std::string("?"));
}

std::optional<double> gpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units) {
  if (const auto* slowest = slowest_arm(plan_details)) return (*slowest)["gpu_hours_per_run"].get<double>();
  if (!plan_details.is_object() || !plan_details.contains("estimate") || !plan_details["estimate"].is_object()) {
    return std::nullopt;
  }
  const auto& estimate = plan_details["estimate"];
  if (estimate.contains("gpu_hours_per_run") && estimate["gpu_hours_per_run"].is_number()) {
    return estimate["gpu_hours_per_run"].get<double>();
  }
  if (units > 0 && estimate.contains("gpu_hours_total") && estimate["gpu_hours_total"].is_number()) {
    return estimate["gpu_hours_total"].get<double>() / static_cast<double>(units);
  }
  return std::nullopt;
}

std::string slurm_time(double hours) {
  if (!(hours > 0) || !std::isfinite(hours)) throw std::invalid_argument("slurm_time: hours must be positive and finite");
  const auto minutes = static_cast<long long>(std::ceil(hours * 60.0 - 1e-9));
  char text[64];
  std::snprintf(text, sizeof text, "%lld-%02lld:%02lld:00", minutes / (24 * 60), (minutes / 60) % 24, minutes % 60);
  return text;
}

}  // namespace k3lab::exec
