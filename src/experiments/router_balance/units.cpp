#include "router_balance/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::router_balance {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"no-control", "aux-loss", "fixed-step-bias", "quantile-balancing"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string got;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("router-balance: arms must be exactly {no-control, aux-loss, fixed-step-bias, "
                                "quantile-balancing}; found {" + got + "}");
  }
}

std::string unit_id(const std::string& arm, std::uint64_t seed) {
  return "arm=" + arm + "/seed=" + std::to_string(seed);
}

nlohmann::json control_spec(const Parameters& p, const std::string& arm) {
  if (arm == "no-control") return {{"kind", "none"}};
  if (arm == "aux-loss") return {{"kind", "aux-loss"}, {"coefficient", p.aux_loss_coefficient}};
  if (arm == "fixed-step-bias") return {{"kind", "sign-bias"}, {"step", p.fixed_step}};
  if (arm == "quantile-balancing") {
    nlohmann::json spec = {{"kind", "quantile-bias"}, {"estimator", p.quantile_estimator}};
    if (p.quantile_estimator == "histogram") spec["histogram_bins"] = p.quantile_histogram_bins;
    return spec;
  }
  throw std::invalid_argument("router-balance: unknown arm \"" + arm + "\"");
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.seeds.size(); ++i) {
    for (const auto& arm : arm_ids()) {
      units.push_back({unit_id(arm, p.seeds[i]),
                       {{"arm", arm},
                        {"seed", p.seeds[i]},
                        {"seed_index", i + 1},
                        {"control", control_spec(p, arm)},
                        {"warmup_updates", p.warmup_updates},
                        {"measured_updates", p.measured_updates}}});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::router_balance
