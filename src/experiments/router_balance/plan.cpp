#include "router_balance/plan.hpp"

#include <map>

namespace k3lab::experiments::router_balance {
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
  const double tokens_per_run = static_cast<double>(p.total_updates()) * static_cast<double>(p.batch_tokens);
  const double active = p.approximate_active_parameters();
  const double flops_per_run = 6.0 * active * tokens_per_run;
  const double gpu_hours_per_run = flops_per_run / (kMeasuredMatmulFlops * kAssumedUtilisation) / 3600.0;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
  d["per_run"] = {{"warmup_updates", p.warmup_updates},
                  {"measured_updates", p.measured_updates},
                  {"tokens", tokens_per_run},
                  {"logged_points", p.measured_updates / p.log_interval_updates}};
  d["routing"] = {{"n_experts", p.model.n_experts},
                  {"top_k", p.model.top_k},
                  {"capacity_factor", p.capacity_factor},
                  {"expert_capacity_per_batch", p.expert_capacity()},
                  {"mean_expert_load_per_batch",
                   static_cast<double>(p.batch_tokens) * p.model.top_k / p.model.n_experts}};
  d["training_tokens_total"] = runs * tokens_per_run;
  d["estimate"] = {{"approximate_active_parameters", active},
                   {"flops_per_run", flops_per_run},
                   {"gpu_hours_per_run", gpu_hours_per_run},
                   {"gpu_hours_total", gpu_hours_per_run * runs},
                   {"basis", "6 x active parameters x tokens at 40% of the 795 TFLOP/s bf16 matmul rate measured on "
                             "one H200; routing, dispatch and attention scores are not counted, so this is a lower "
                             "bound on time"}};
  return d;
}

}  // namespace k3lab::experiments::router_balance
