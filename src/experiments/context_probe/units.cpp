#include "context_probe/units.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "k3lab/core/rng.hpp"

namespace k3lab::experiments::context_probe {
namespace {

std::string cell_path(const std::string& family, std::size_t fixture, std::int64_t length) {
  return "family=" + family + "/fixture=" + std::to_string(fixture) + "/length=" + std::to_string(length);
}

// The spec of one call of a cell in `stratum` (its arm), as a scored cell or its priming call.
nlohmann::json cell_spec(const Parameters& p, const std::string& family, std::size_t fixture, std::int64_t length,
                         int rep, const std::string& stratum, const char* role) {
  nlohmann::json spec = {{"family", family},
                         {"fixture", fixture},
                         {"fixture_seed", p.fixture_seeds[fixture - 1]},
                         {"length", length},
                         {"rep", rep},
                         {"max_completion_tokens", p.max_completion_tokens},
                         {"max_prompt_tokens", p.max_prompt_tokens(length)},
                         {"haystack_tokens", p.haystack_tokens(length)}};
  spec["arm"] = stratum;
  spec["stratum"] = stratum;
  spec["role"] = role;
  spec["prefix_id"] = prefix_id(family, fixture, length, rep, stratum);
  return spec;
}

}  // namespace

void require_arms(const std::vector<core::Arm>& arms) {
  std::set<std::string> ids;
  for (const auto& arm : arms) ids.insert(arm.id);
  if (ids != std::set<std::string>{kCold, kWarm} || arms.size() != 2) {
    std::string found;
    for (const auto& arm : arms) found += (found.empty() ? "" : ", ") + arm.id;
    throw std::invalid_argument("context-probe: arms must be exactly the two cache strata \"cold\" and \"warm\" "
                                "(seed: cold-prefix and warm-prefix runs form separate strata); found: " +
                                found);
  }
}

std::string scored_unit_id(const std::string& family, std::size_t fixture, std::int64_t length,
                           const std::string& stratum, int rep) {
  return cell_path(family, fixture, length) + "/stratum=" + stratum + "/rep=" + std::to_string(rep);
}

std::string priming_unit_id(const std::string& family, std::size_t fixture, std::int64_t length, int rep) {
  return "prime/" + cell_path(family, fixture, length) + "/rep=" + std::to_string(rep);
}

std::string prefix_id(const std::string& family, std::size_t fixture, std::int64_t length, int rep,
                      const std::string& stratum) {
  return "cp-" + family + "-f" + std::to_string(fixture) + "-L" + std::to_string(length) + "-r" +
         std::to_string(rep) + "-" + stratum;
}

std::vector<Unit> enumerate_units(const Parameters& p) {
  struct Block {
    std::string family;
    std::size_t fixture;
    std::int64_t length;
  };
  std::vector<Unit> units;
  units.reserve(p.families.size() * p.fixture_seeds.size() * p.lengths.size() * p.repetitions * 3);
  for (int rep = 1; rep <= p.repetitions; ++rep) {
    std::vector<Block> blocks;
    for (const auto& family : p.families) {
      for (std::size_t fixture = 1; fixture <= p.fixture_seeds.size(); ++fixture) {
        for (const auto length : p.lengths) blocks.push_back({family, fixture, length});
      }
    }
    // Fisher-Yates with k3lab's generator: the same order on every platform.
    core::Rng rng(core::stream_seed(p.order_seed, {static_cast<std::uint64_t>(rep)}));
    for (std::size_t i = blocks.size(); i > 1; --i) std::swap(blocks[i - 1], blocks[rng.below(i)]);

    for (const auto& b : blocks) {
      const std::string prime_id = priming_unit_id(b.family, b.fixture, b.length, rep);
      const std::string warm_id = scored_unit_id(b.family, b.fixture, b.length, kWarm, rep);

      auto cold = cell_spec(p, b.family, b.fixture, b.length, rep, kCold, "scored");
      cold["cache_buster"] = true;
      cold["accept_when"] = "usage.cached_tokens == 0";
      units.push_back({scored_unit_id(b.family, b.fixture, b.length, kCold, rep), std::move(cold)});

      auto prime = cell_spec(p, b.family, b.fixture, b.length, rep, kWarm, "prime");
      prime["primes"] = warm_id;
      units.push_back({prime_id, std::move(prime)});

      auto warm = cell_spec(p, b.family, b.fixture, b.length, rep, kWarm, "scored");
      warm["primed_by"] = prime_id;
      warm["accept_when"] = "usage.cached_tokens > 0";
      units.push_back({warm_id, std::move(warm)});
    }
  }
  return units;
}

}  // namespace k3lab::experiments::context_probe
