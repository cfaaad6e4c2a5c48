#include "situ_qat/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::situ_qat {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"swiglu", "situ-glu"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string got;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("situ-qat: arms must be exactly {swiglu, situ-glu}; found {" + got + "}");
  }
}

std::string unit_id(const std::string& arm, std::uint64_t seed) {
  return "arm=" + arm + "/seed=" + std::to_string(seed);
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.seeds.size(); ++i) {
    for (const auto& arm : arm_ids()) {
      nlohmann::json activation = {{"kind", arm}};
      if (arm == "situ-glu") {
        activation["beta1"] = p.beta1;
        activation["beta2"] = p.beta2;
      }
      units.push_back({unit_id(arm, p.seeds[i]),
                       {{"arm", arm},
                        {"seed", p.seeds[i]},
                        {"seed_index", i + 1},
                        {"activation", activation},
                        {"token_budget", p.token_budget},
                        {"histogram_checkpoints", p.token_budget / p.histogram_interval_tokens}}});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::situ_qat
