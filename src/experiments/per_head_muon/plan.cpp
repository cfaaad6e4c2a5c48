#include "per_head_muon/plan.hpp"

#include <map>

#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

// The estimate's basis: bf16 8192^3 matmul measured at about 795 TFLOP/s on the H200 (DESIGN.md
// section 8), of which a small model's training step is assumed to reach 40%.
constexpr double kMeasuredMatmulFlops = 795e12;
constexpr double kAssumedUtilisation = 0.40;

}  // namespace

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::map<std::string, std::size_t> pilot_by_arm, pilot_by_config, pilot_by_seed, confirm_by_arm, confirm_by_seed;
  std::size_t pilot = 0, confirm = 0;
  double tokens = 0;
  for (const auto& u : units) {
    const auto& s = u.spec;
    const std::string arm = s.at("arm").get<std::string>();
    const std::string seed = std::to_string(s.at("seed").get<std::uint64_t>());
    tokens += s.at("token_budget").get<double>();
    if (s.at("phase") == "pilot") {
      ++pilot;
      ++pilot_by_arm[arm];
      ++pilot_by_config[std::to_string(s.at("config").get<int>())];
      ++pilot_by_seed[seed];
    } else {
      ++confirm;
      ++confirm_by_arm[arm];
      ++confirm_by_seed[seed];
    }
  }
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& c : p.configurations()) {
    grid.push_back({{"config", c.id}, {"learning_rate", c.learning_rate}, {"weight_decay", c.weight_decay}});
  }
  const double parameters = p.approximate_parameters();
  const double flops = 6.0 * parameters * tokens;
  const double gpu_hours = flops / (kMeasuredMatmulFlops * kAssumedUtilisation) / 3600.0;
  nlohmann::json d;
  d["runs"] = {{"total", units.size()},
               {"pilot", {{"total", pilot}, {"by_arm", pilot_by_arm}, {"by_config", pilot_by_config},
                          {"by_seed", pilot_by_seed}}},
               {"confirmatory", {{"total", confirm}, {"by_arm", confirm_by_arm}, {"by_seed", confirm_by_seed},
                                 {"config", "selected per arm after the pilot"}}}};
  d["search_grid"] = grid;
  d["selection_rule"] = kSelectionRule;
  d["per_run"] = {{"pilot_token_budget", p.pilot_token_budget},
                  {"confirmatory_token_budget", p.token_budget},
                  {"checkpoints_per_confirmatory_run", p.token_budget / p.eval_interval_tokens}};
  d["training_tokens_total"] = tokens;
  d["estimate"] = {{"approximate_parameters", parameters},
                   {"flops_total", flops},
                   {"gpu_hours_total", gpu_hours},
                   {"basis", "6 x parameters x tokens at 40% of the 795 TFLOP/s bf16 matmul rate measured on one "
                             "H200; Newton-Schulz iterations, attention scores and evaluation are not counted, so "
                             "this is a lower bound on time"}};
  return d;
}

}  // namespace k3lab::experiments::per_head_muon
