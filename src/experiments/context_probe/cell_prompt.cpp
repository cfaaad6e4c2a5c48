#include "context_probe/cell_prompt.hpp"

#include <algorithm>
#include <stdexcept>

#include "k3lab/api/budget.hpp"
#include "k3lab/api/token_estimate.hpp"
#include "context_probe/repository_pin.hpp"

namespace k3lab::experiments::context_probe {

validate::FixtureFamily fixture_family_of(const std::string& name) {
  if (name == "single") return validate::FixtureFamily::single_retrieval;
  if (name == "distractor") return validate::FixtureFamily::distractor_retrieval;
  try {
    return validate::parse_fixture_family(name);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("context-probe: unknown fixture family \"" + name +
                                "\"; use single, distractor, multi-hop, order-state or repository");
  }
}

std::string salted_prefix_id(const std::string& window_id, const std::string& prefix_id) {
  return window_id.empty() ? prefix_id : window_id + "/" + prefix_id;
}

nlohmann::json CellBudget::to_json() const {
  return {{"length", length},
          {"prompt_tokens", prompt_tokens},
          {"framing_tokens", framing_tokens},
          {"max_completion_tokens", max_completion_tokens},
          {"headroom_tokens", headroom()}};
}

validate::FixtureRequest fixture_request(const Parameters& p, const std::string& family, std::size_t fixture_number,
                                         std::int64_t length, const std::string& prefix_id,
                                         const validate::TokenEstimator& estimator) {
  const std::size_t fixtures = std::min<std::size_t>(p.fixture_seeds.size(), validate::kFixturesPerFamily);
  if (fixture_number < 1 || fixture_number > fixtures) {
    throw std::invalid_argument("context-probe: fixture " + std::to_string(fixture_number) +
                                " does not exist; the protocol defines fixtures 1.." + std::to_string(fixtures));
  }
  if (p.haystack_tokens(length) < 1) {
    throw std::invalid_argument("context-probe: budget " + std::to_string(length) +
                                " leaves no fixture text after max_completion_tokens and framing_reserve_tokens");
  }
  validate::FixtureRequest request;
  request.seed = p.fixture_seeds[fixture_number - 1];
  request.family = fixture_family_of(family);
  request.index = static_cast<int>(fixture_number - 1);
  request.target_tokens = static_cast<std::size_t>(p.haystack_tokens(length));
  request.prefix_id = prefix_id;
  request.estimator = estimator;
  if (request.family == validate::FixtureFamily::repository) request.repository_snapshot = pinned_repository(p.repository);
  return request;
}

CellPrompt build_cell_prompt(const Parameters& p, const nlohmann::json& spec, const std::string& window_id,
                             const validate::TokenEstimator& estimator) {
  CellPrompt cell;
  cell.prefix_id = salted_prefix_id(window_id, spec.at("prefix_id").get<std::string>());
  const auto length = spec.at("length").get<std::int64_t>();
  cell.fixture = validate::generate_context_fixture(fixture_request(p, spec.at("family").get<std::string>(),
                                                                    spec.at("fixture").get<std::size_t>(), length,
                                                                    cell.prefix_id, estimator));
  const nlohmann::json messages = nlohmann::json::array({{{"role", "user"}, {"content", cell.fixture.prompt}}});
  cell.request = {{"model", p.model},
                  {"messages", messages},
                  {"max_completion_tokens", p.max_completion_tokens},
                  {"reasoning_effort", p.reasoning_effort},
                  {"stream", true}};
  cell.budget.length = length;
  cell.budget.prompt_tokens = cell.fixture.prompt_tokens;
  cell.budget.framing_tokens = api::framing_upper_bound(messages.size());
  cell.budget.max_completion_tokens = static_cast<std::uint64_t>(p.max_completion_tokens);
  api::budget_check(cell.budget.prompt_tokens, cell.budget.framing_tokens, cell.budget.max_completion_tokens,
                    static_cast<std::uint64_t>(length));
  return cell;
}

}  // namespace k3lab::experiments::context_probe
