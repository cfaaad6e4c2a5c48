#include "hybrid_attention/units.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::hybrid_attention {

const std::vector<std::string>& arm_ids() {
  static const std::vector<std::string> ids = {"full-attention", "all-kda", "hybrid-3kda-1mla"};
  return ids;
}

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> found;
  for (const auto& arm : arms) found.insert(arm.id);
  if (found != std::set<std::string>(arm_ids().begin(), arm_ids().end()) || arms.size() != arm_ids().size()) {
    std::string got;
    for (const auto& arm : arms) got += (got.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("hybrid-attention: arms must be exactly {full-attention, all-kda, hybrid-3kda-1mla} "
                                "(the seed's three memory strategies); found {" + got + "}");
  }
}

std::vector<std::string> layer_schedule(const std::string& arm, int n_layers) {
  std::vector<std::string> mixers;
  for (int layer = 0; layer < n_layers; ++layer) {
    if (arm == "full-attention") mixers.push_back("mla");
    else if (arm == "all-kda") mixers.push_back("kda");
    else if (arm == "hybrid-3kda-1mla") mixers.push_back(layer % 4 == 3 ? "mla" : "kda");
    else throw std::invalid_argument("hybrid-attention: unknown arm \"" + arm + "\"");
  }
  return mixers;
}

std::string unit_id(const std::string& arm, std::uint64_t seed) {
  return "arm=" + arm + "/seed=" + std::to_string(seed);
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < p.seeds.size(); ++i) {
    for (const auto& arm : arm_ids()) {
      units.push_back({unit_id(arm, p.seeds[i]),
                       {{"arm", arm},
                        {"seed", p.seeds[i]},
                        {"seed_index", i + 1},
                        {"layer_schedule", layer_schedule(arm, p.model.n_layers)},
                        {"token_budget", p.token_budget},
                        {"evaluations", p.token_budget / p.eval_interval_tokens},
                        {"safety_timeout_hours", p.safety_timeout_hours}}});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::hybrid_attention
