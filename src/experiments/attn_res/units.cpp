#include "attn_res/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::attn_res {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"ordinary-residual", "full-attnres", "block-attnres"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string got;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("attn-res: arms must be exactly {ordinary-residual, full-attnres, block-attnres}; "
                                "found {" + got + "}");
  }
}

std::string unit_id(const std::string& arm, std::uint64_t seed) {
  return "arm=" + arm + "/seed=" + std::to_string(seed);
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.seeds.size(); ++i) {
    for (const auto& arm : arm_ids()) {
      nlohmann::json spec = {{"arm", arm},
                             {"seed", p.seeds[i]},
                             {"seed_index", i + 1},
                             {"n_layers", p.model.n_layers},
                             {"token_budget", p.token_budget},
                             {"checkpoints", p.token_budget / p.eval_interval_tokens}};
      if (arm == "block-attnres") spec["block_layers"] = p.attnres_block_layers;
      units.push_back({unit_id(arm, p.seeds[i]), std::move(spec)});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::attn_res
