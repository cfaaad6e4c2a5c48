#include "k3lab/validate/placement_rule.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace k3lab::validate {
namespace {

void check_index(int index) {
  if (index < 0 || index >= kFixturesPerFamily) {
    throw std::invalid_argument("placement rule: fixture index " + std::to_string(index) +
                                " is outside 0.." + std::to_string(kFixturesPerFamily - 1));
  }
}

bool is_retrieval(FixtureFamily family) {
  return family == FixtureFamily::single_retrieval || family == FixtureFamily::distractor_retrieval;
}

}  // namespace

double required_spread(int index) {
  check_index(index);
  return 0.10 + 0.80 * static_cast<double>(index) / (kFixturesPerFamily - 1);
}

std::vector<double> required_depths(FixtureFamily family, int index, int count) {
  check_index(index);
  if (count < 1) throw std::invalid_argument("placement rule: required evidence count must be >= 1");
  if (is_retrieval(family)) {
    if (count != 1) {
      throw std::invalid_argument("placement rule: " + std::string(family_id(family)) +
                                  " places exactly one required fact, not " + std::to_string(count));
    }
    return {0.95 - 0.90 * static_cast<double>(index) / (kFixturesPerFamily - 1)};
  }
  const double spread = required_spread(index);
  if (count == 1) return {0.5};
  std::vector<double> depths;
  for (int k = 0; k < count; ++k) {
    depths.push_back(0.5 - spread / 2 + spread * static_cast<double>(k) / (count - 1));
  }
  return depths;
}

std::vector<double> distractor_depths(FixtureFamily family, int count) {
  static constexpr std::array<double, 6> retrieval = {0.12, 0.37, 0.62, 0.87, 0.25, 0.75};
  static constexpr std::array<double, 6> multi_hop = {0.20, 0.40, 0.60, 0.80, 0.30, 0.70};
  static constexpr std::array<double, 6> order_state = {0.08, 0.22, 0.42, 0.58, 0.78, 0.92};
  static constexpr std::array<double, 6> repository = {0.30, 0.70, 0.15, 0.85, 0.45, 0.55};
  const std::array<double, 6>* table = &retrieval;
  if (family == FixtureFamily::multi_hop) table = &multi_hop;
  if (family == FixtureFamily::order_state) table = &order_state;
  if (family == FixtureFamily::repository) table = &repository;
  std::vector<double> depths;
  for (int k = 0; k < count; ++k) depths.push_back((*table)[static_cast<std::size_t>(k) % table->size()]);
  return depths;
}

}  // namespace k3lab::validate
