#include "k3lab/validate/fixture_family.hpp"

#include <stdexcept>

namespace k3lab::validate {

std::string_view family_id(FixtureFamily family) {
  switch (family) {
    case FixtureFamily::single_retrieval: return "single-retrieval";
    case FixtureFamily::distractor_retrieval: return "distractor-retrieval";
    case FixtureFamily::multi_hop: return "multi-hop";
    case FixtureFamily::order_state: return "order-state";
    case FixtureFamily::repository: return "repository";
  }
  throw std::invalid_argument("family_id: unknown FixtureFamily value");
}

FixtureFamily parse_fixture_family(std::string_view id) {
  for (FixtureFamily family : kFixtureFamilies) {
    if (family_id(family) == id) return family;
  }
  throw std::invalid_argument("unknown fixture family '" + std::string(id) +
                              "'; use one of: single-retrieval, distractor-retrieval, multi-hop, "
                              "order-state, repository");
}

std::string fixture_id(FixtureFamily family, int index) {
  if (index < 0 || index >= kFixturesPerFamily) {
    throw std::invalid_argument("fixture index " + std::to_string(index) + " is outside 0.." +
                                std::to_string(kFixturesPerFamily - 1));
  }
  return std::string(family_id(family)) + "/" + std::to_string(index);
}

}  // namespace k3lab::validate
