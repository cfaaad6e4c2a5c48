#include "k3lab/exec/resources.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace k3lab::exec {
namespace {

constexpr int kCpusPerGpuTask = 8;          // a common per-GPU CPU share on GPU clusters
constexpr double kEstimateSafetyFactor = 3.0;  // the plans' estimates are lower bounds
constexpr double kMinimumGpuTaskHours = 0.5;

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
  if (gpu) {
    options.push_back({"gres", "gpu:1"});
    if (inputs.gpu_hours_per_unit && *inputs.gpu_hours_per_unit > 0) {
      const double hours = std::max(kMinimumGpuTaskHours, kEstimateSafetyFactor * *inputs.gpu_hours_per_unit *
                                                              static_cast<double>(std::max<std::size_t>(1, inputs.max_units_per_task)));
      options.push_back({"time", slurm_time(hours)});
    }
  }
  return options;
}

std::optional<double> gpu_hours_per_unit(const nlohmann::json& plan_details, std::size_t units) {
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
