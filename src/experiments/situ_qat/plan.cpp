#include "situ_qat/plan.hpp"

#include <map>

namespace k3lab::experiments::situ_qat {
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
  const double parameters = p.approximate_parameters();
  const double flops_per_run = 6.0 * parameters * static_cast<double>(p.token_budget);
  const double gpu_hours_per_run = flops_per_run / (kMeasuredMatmulFlops * kAssumedUtilisation) / 3600.0;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()}, {"by_arm", by_arm}, {"by_seed", by_seed}};
  d["per_run"] = {{"token_budget", p.token_budget},
                  {"optimizer_steps", p.token_budget / p.batch_tokens},
                  {"evaluations", p.token_budget / p.eval_interval_tokens},
                  {"histogram_checkpoints", p.token_budget / p.histogram_interval_tokens}};
  d["qat"] = {{"weights", p.quantization.weight_format},
              {"activations", p.quantization.activation_format},
              {"block_size", p.quantization.block_size},
              {"scale_rounding", p.quantization.scale_rounding},
              {"situ_betas", {p.beta1, p.beta2}},
              {"situ_output_bound", p.beta1 * p.beta2}};
  d["training_tokens_total"] = runs * static_cast<double>(p.token_budget);
  d["estimate"] = {{"approximate_parameters", parameters},
                   {"flops_per_run", flops_per_run},
                   {"gpu_hours_per_run", gpu_hours_per_run},
                   {"gpu_hours_total", gpu_hours_per_run * runs},
                   {"basis", "6 x parameters x tokens at 40% of the 795 TFLOP/s bf16 matmul rate measured on one "
                             "H200; fake-quantization, histograms and evaluation are not counted, so this is a lower "
                             "bound on time"}};
  return d;
}

}  // namespace k3lab::experiments::situ_qat
