#include "k3lab/experiments/training/plan_estimate.hpp"

#include <cmath>
#include <map>

namespace k3lab::experiments::training {

GpuHours gpu_hours(double parameters, double tokens) {
  GpuHours g;
  g.flops = 6.0 * parameters * tokens;
  g.gpu_hours = g.flops / (kH200Bf16Matmul.flops_per_second * kAssumedUtilisation) / 3600.0;
  return g;
}

std::string estimate_basis(const std::string& counted, const std::string& not_counted) {
  const auto percent = std::llround(100 * kAssumedUtilisation);
  const auto tflops = std::llround(kH200Bf16Matmul.flops_per_second / 1e12);
  return counted + " at " + std::to_string(percent) + "% of the " + std::to_string(tflops) + " TFLOP/s " +
         kH200Bf16Matmul.operation + " rate measured on one " + kH200Bf16Matmul.device + "; " + not_counted;
}

nlohmann::json per_run_estimate(const RunCost& cost, std::size_t runs) {
  const auto per_run = gpu_hours(cost.parameters, cost.tokens_per_run);
  nlohmann::json estimate = {{"flops_per_run", per_run.flops},
                             {"gpu_hours_per_run", per_run.gpu_hours},
                             {"gpu_hours_total", per_run.gpu_hours * static_cast<double>(runs)},
                             {"basis", estimate_basis(cost.counted, cost.not_counted)}};
  if (!cost.parameters_key.empty()) estimate[cost.parameters_key] = cost.parameters;
  return estimate;
}

void add_run_estimate(nlohmann::json& details, const RunCost& cost, std::size_t runs) {
  details["training_tokens_total"] = static_cast<double>(runs) * cost.tokens_per_run;
  details["estimate"] = per_run_estimate(cost, runs);
}

nlohmann::json runs_by_arm_and_seed(const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> by_arm, by_seed;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_seed[std::to_string(u.spec.at("seed").get<std::uint64_t>())];
  }
  return {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
}

}  // namespace k3lab::experiments::training
