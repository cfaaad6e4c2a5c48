#include "context_probe/plan.hpp"

#include <cmath>
#include <map>

#include "context_probe/units.hpp"
#include "k3lab/api/transport_options.hpp"

namespace k3lab::experiments::context_probe {
namespace {

double usd(double tokens, double usd_per_million) { return tokens * usd_per_million / 1e6; }

// Estimates are shown to the cent; the token bounds beside them stay exact.
double cents(double dollars) { return std::round(dollars * 100.0) / 100.0; }

nlohmann::json counts_json(const std::map<std::string, std::size_t>& counts) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, n] : counts) out[key] = n;
  return out;
}

}  // namespace

std::size_t tolerated_invalid_cells(const Parameters& p, std::size_t scored_cells) {
  // The small epsilon keeps 0.05 * 1200 at 60 despite binary rounding.
  return static_cast<std::size_t>(std::floor(p.invalid_fraction_limit * static_cast<double>(scored_cells) + 1e-9));
}

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units) {
  std::size_t scored = 0, priming = 0;
  std::map<std::string, std::size_t> by_stratum, by_family, by_length, by_repetition;
  double miss_tokens = 0, hit_tokens = 0, completion_tokens = 0;
  for (const auto& u : units) {
    const auto& s = u.spec;
    const bool is_prime = s.at("role") == "prime";
    const double prompt = s.at("max_prompt_tokens").get<double>();
    completion_tokens += s.at("max_completion_tokens").get<double>();
    if (is_prime) {
      ++priming;
      miss_tokens += prompt;
      continue;
    }
    ++scored;
    const std::string stratum = s.at("stratum").get<std::string>();
    ++by_stratum[stratum];
    ++by_family[s.at("family").get<std::string>()];
    ++by_length[std::to_string(s.at("length").get<std::int64_t>())];
    ++by_repetition[std::to_string(s.at("rep").get<int>())];
    (stratum == kWarm ? hit_tokens : miss_tokens) += prompt;
  }
  const auto& price = p.pricing;
  const double prompt_cached = usd(miss_tokens, price.cache_miss) + usd(hit_tokens, price.cache_hit);
  const double prompt_uncached = usd(miss_tokens + hit_tokens, price.cache_miss);
  const double completion = usd(completion_tokens, price.output);

  nlohmann::json d;
  d["calls"] = {{"scored", scored},
                {"priming", priming},
                {"total_before_transport_retries", units.size()},
                // Every send counts, whatever the error class (api::RetryPolicy: one cap of 1 + retries).
                {"most_requests_with_transport_retries", units.size() * (1 + p.transport_retries)},
                {"most_sends_every_error_class", units.size() * (1 + p.transport_retries)}};
  d["scored_cells_by_axis"] = {{"stratum", counts_json(by_stratum)},
                               {"family", counts_json(by_family)},
                               {"length", counts_json(by_length)},
                               {"repetition", counts_json(by_repetition)},
                               {"fixtures_per_family", p.fixture_seeds.size()}};
  d["window"] = {{"hours", p.test_window_hours},
                 {"model", p.model},
                 {"reasoning_effort", p.reasoning_effort},
                 {"invalid_fraction_limit", p.invalid_fraction_limit},
                 {"scored_cells", scored},
                 {"stop_when_invalid_cells_exceed", tolerated_invalid_cells(p, scored)}};
  d["transport"] = api::transport_plan(p.transport, api::RetryPolicy::with_retries(p.transport_retries),
                                       static_cast<double>(units.size()), p.test_window_hours);
  d["token_bounds"] = {{"prompt_tokens_priming_and_cold", miss_tokens},
                       {"prompt_tokens_warm_scored", hit_tokens},
                       {"completion_tokens_at_cap", completion_tokens}};
  d["cost_usd"] = {{"prompt_if_warm_cells_fully_cached", cents(prompt_cached)},
                   {"prompt_if_no_cache_hits", cents(prompt_uncached)},
                   {"completion_at_cap", cents(completion)},
                   {"total_if_warm_cells_fully_cached", cents(prompt_cached + completion)},
                   {"total_upper_bound", cents(prompt_uncached + completion)}};
  d["price_table"] = {{"model", price.model},
                      {"as_of", price.as_of},
                      {"source", price.source},
                      {"usd_per_million", {{"cache_hit", price.cache_hit},
                                           {"cache_miss", price.cache_miss},
                                           {"output", price.output}}}};
  d["assumptions"] = {
      "every prompt is at its budget's ceiling (budget - max_completion_tokens); real prompts are slightly shorter",
      "every completion uses its full max_completion_tokens (reasoning included); real use is lower",
      "retries are not priced (at most " + std::to_string(p.transport_retries) +
          " per call whatever the error class, rate limits and overloads included)",
      "prices are the protocol's table (as of " + price.as_of + "); recheck them before a paid window"};
  return d;
}

}  // namespace k3lab::experiments::context_probe
