#include "k3lab/experiments/training/design.hpp"

#include <set>
#include <stdexcept>

namespace k3lab::experiments::training {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

}  // namespace

void require_arms(const std::string& experiment_id, const std::vector<core::Arm>& declared,
                  const std::vector<std::string>& arms) {
  std::vector<std::string> found;
  for (const auto& arm : declared) found.push_back(arm.id);
  if (std::set<std::string>(found.begin(), found.end()) != std::set<std::string>(arms.begin(), arms.end()) ||
      found.size() != arms.size()) {
    throw std::invalid_argument(experiment_id + ": arms must be exactly {" + joined(arms) + "}; found {" +
                                joined(found) + "}");
  }
}

std::string arm_seed_unit_id(const std::string& arm, std::uint64_t seed) {
  return "arm=" + arm + "/seed=" + std::to_string(seed);
}

std::vector<Unit> arm_by_seed_units(const std::vector<std::string>& arms, const std::vector<std::uint64_t>& seeds,
                                    const ArmSpec& spec_of, const UnitId& id_of) {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    for (const auto& arm : arms) {
      nlohmann::json spec = spec_of ? spec_of(arm) : nlohmann::json::object();
      spec["arm"] = arm;
      spec["seed"] = seeds[i];
      spec["seed_index"] = i + 1;
      units.push_back({id_of(arm, seeds[i]), std::move(spec)});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::training
