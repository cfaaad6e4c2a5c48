#include "hybrid_attention/plan.hpp"

#include <cmath>
#include <map>

namespace k3lab::experiments::hybrid_attention {
namespace {

// The estimate's basis: bf16 8192^3 matmul measured at about 795 TFLOP/s on the H200 (DESIGN.md
// section 8), of which a small model's training step is assumed to reach 40%.
constexpr double kMeasuredMatmulFlops = 795e12;
constexpr double kAssumedUtilisation = 0.40;

}  // namespace

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> by_arm, by_seed;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_seed[std::to_string(u.spec.at("seed").get<std::uint64_t>())];
  }
  const double runs = static_cast<double>(units.size());
  const double tokens = runs * static_cast<double>(p.token_budget);
  const double flops_per_run = 6.0 * static_cast<double>(p.target_parameters) * static_cast<double>(p.token_budget);
  const double gpu_hours_per_run = flops_per_run / (kMeasuredMatmulFlops * kAssumedUtilisation) / 3600.0;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"evaluations", p.token_budget / p.eval_interval_tokens},
                  {"eval_interval_tokens", p.eval_interval_tokens},
                  {"safety_timeout_hours", p.safety_timeout_hours}};
  d["parameters"] = {{"target", p.target_parameters},
                     {"tolerance", p.parameter_tolerance},
                     {"allowed_range",
                      {std::llround(static_cast<double>(p.target_parameters) * (1 - p.parameter_tolerance)),
                       std::llround(static_cast<double>(p.target_parameters) * (1 + p.parameter_tolerance))}}};
  d["training_tokens_total"] = tokens;
  d["estimate"] = {{"flops_per_run", flops_per_run},
                   {"gpu_hours_per_run", gpu_hours_per_run},
                   {"gpu_hours_total", gpu_hours_per_run * runs},
                   {"basis", "6 x parameters x tokens at 40% of the 795 TFLOP/s bf16 matmul rate measured on one "
                             "H200; attention-score, evaluation and probe FLOPs are not counted, so this is a "
                             "lower bound on time, not a budget"}};
  return d;
}

}  // namespace k3lab::experiments::hybrid_attention
