#pragma once
// The exact request of one context-probe call: the fixture for (family, fixture, budget), its
// cache-buster line, the chat request, and the budget check that runs before anything is sent.
//
// A scored cold cell and a warm pair (priming call + warm cell) of the same block carry the same
// fixture text under different prefix ids, so their first lines differ and no cache entry is shared;
// the priming call and its warm cell send byte-identical requests. The prefix id sent is the
// ledger's prefix id salted with the window id, so a later window never hits an earlier window's
// cache.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "context_probe/parameters.hpp"
#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/fixture_family.hpp"
#include "k3lab/validate/token_budget.hpp"

namespace k3lab::experiments::context_probe {

// Protocol family names ("single", "distractor", "multi-hop", "order-state", "repository") and
// validate's ids ("single-retrieval", ...) both map to the validate family. Throws
// std::invalid_argument listing the names.
validate::FixtureFamily fixture_family_of(const std::string& name);

// "<window id>/<prefix id>", or the prefix id alone for an empty window id.
std::string salted_prefix_id(const std::string& window_id, const std::string& prefix_id);

// Fixture `fixture_number` (1-based, as in unit ids) uses seed fixture_seeds[n-1] and placement index
// n-1; its text fills parameters.haystack_tokens(length). Throws std::invalid_argument for a number
// outside 1..min(8, fixture_seeds) or a length the parameters cannot hold.
validate::FixtureRequest fixture_request(const Parameters& p, const std::string& family, std::size_t fixture_number,
                                         std::int64_t length, const std::string& prefix_id,
                                         const validate::TokenEstimator& estimator);

struct CellBudget {
  std::int64_t length = 0;
  std::uint64_t prompt_tokens = 0;   // counted by the estimator (exact with a vocabulary)
  std::uint64_t framing_tokens = 0;  // api::framing_upper_bound(messages)
  std::uint64_t max_completion_tokens = 0;
  std::int64_t headroom() const {
    return length - static_cast<std::int64_t>(prompt_tokens + framing_tokens + max_completion_tokens);
  }
  nlohmann::json to_json() const;
};

struct CellPrompt {
  validate::ContextFixture fixture;
  std::string prefix_id;  // as sent (salted)
  nlohmann::json request;
  CellBudget budget;
};

// Builds the fixture and request for a unit spec (see units.hpp) and runs api::budget_check: throws
// api::BudgetExceeded (nothing is truncated) when prompt + framing + max_completion_tokens exceeds the
// cell's budget.
CellPrompt build_cell_prompt(const Parameters& p, const nlohmann::json& spec, const std::string& window_id,
                             const validate::TokenEstimator& estimator);

}  // namespace k3lab::experiments::context_probe
