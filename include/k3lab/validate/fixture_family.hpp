#pragma once
// The five context-probe fixture families of experiment 1 (seed: "Experiment one").
#include <array>
#include <string>
#include <string_view>

namespace k3lab::validate {

enum class FixtureFamily {
  single_retrieval,      // one exact fact at a controlled depth
  distractor_retrieval,  // similar facts compete with the target
  multi_hop,             // the answer needs three facts from distant sections
  order_state,           // ledger events whose result changes when they are reordered
  repository,            // a code snapshot where definitions must be traced across files
};

inline constexpr int kFixturesPerFamily = 8;
inline constexpr std::array<FixtureFamily, 5> kFixtureFamilies = {
    FixtureFamily::single_retrieval, FixtureFamily::distractor_retrieval, FixtureFamily::multi_hop,
    FixtureFamily::order_state, FixtureFamily::repository};

// "single-retrieval", "distractor-retrieval", "multi-hop", "order-state", "repository".
std::string_view family_id(FixtureFamily family);
// Inverse of family_id; throws std::invalid_argument listing the valid ids.
FixtureFamily parse_fixture_family(std::string_view id);
// "<family id>/<index>", e.g. "multi-hop/3". Throws std::invalid_argument for an index outside 0..7.
std::string fixture_id(FixtureFamily family, int index);

}  // namespace k3lab::validate
