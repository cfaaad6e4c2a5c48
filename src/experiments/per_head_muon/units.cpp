#include "per_head_muon/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::per_head_muon {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"adamw", "muon", "per-head-muon"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string got;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("per-head-muon: arms must be exactly {adamw, muon, per-head-muon}; found {" + got + "}");
  }
}

std::string pilot_unit_id(const std::string& arm, int configuration, std::uint64_t seed) {
  return "phase=pilot/arm=" + arm + "/config=" + std::to_string(configuration) + "/seed=" + std::to_string(seed);
}

std::string confirmatory_unit_id(const std::string& arm, std::uint64_t seed) {
  return "phase=confirm/arm=" + arm + "/config=" + kSelectedConfiguration + "/seed=" + std::to_string(seed);
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  const auto grid = p.configurations();
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.pilot_seeds.size(); ++i) {
    for (const auto& c : grid) {
      for (const auto& arm : arm_ids()) {
        units.push_back({pilot_unit_id(arm, c.id, p.pilot_seeds[i]),
                         {{"phase", "pilot"},
                          {"arm", arm},
                          {"config", c.id},
                          {"learning_rate", c.learning_rate},
                          {"weight_decay", c.weight_decay},
                          {"seed", p.pilot_seeds[i]},
                          {"seed_index", i + 1},
                          {"token_budget", p.pilot_token_budget}}});
      }
    }
  }
  for (std::size_t i = 0; i < p.confirmatory_seeds.size(); ++i) {
    for (const auto& arm : arm_ids()) {
      nlohmann::json candidates = nlohmann::json::array();
      for (auto seed : p.pilot_seeds) {
        for (const auto& c : grid) candidates.push_back(pilot_unit_id(arm, c.id, seed));
      }
      units.push_back({confirmatory_unit_id(arm, p.confirmatory_seeds[i]),
                       {{"phase", "confirmatory"},
                        {"arm", arm},
                        {"config", kSelectedConfiguration},
                        {"selection_rule", kSelectionRule},
                        {"selected_from", std::move(candidates)},
                        {"seed", p.confirmatory_seeds[i]},
                        {"seed_index", i + 1},
                        {"token_budget", p.token_budget}}});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::per_head_muon
