#include "k3lab/api/price_table.hpp"

#include <algorithm>

namespace k3lab::api {

double PriceTable::call_usd(std::int64_t prompt_tokens, std::int64_t cached_tokens,
                            std::int64_t completion_tokens) const {
  const double cached = static_cast<double>(std::min(cached_tokens, prompt_tokens));
  const double uncached = static_cast<double>(prompt_tokens) - cached;
  return (cached * cache_hit + uncached * cache_miss + static_cast<double>(completion_tokens) * output) / 1e6;
}

std::shared_ptr<core::Schema> price_table_schema(const std::string& used_for) {
  auto prices = std::make_shared<core::Schema>();
  prices->number("cache_hit", "USD per 1M prompt tokens served from the context cache").at_least(0);
  prices->number("cache_miss", "USD per 1M prompt tokens not served from the cache").at_least(0);
  prices->number("output", "USD per 1M completion tokens (reasoning tokens are billed as completion)").at_least(0);
  auto s = std::make_shared<core::Schema>();
  s->string("model", "the model id the prices are for; must equal parameters.model");
  s->string("as_of", "the date the prices were checked (YYYY-MM-DD)");
  s->string("source", "where the prices come from (URL or document)");
  s->object("usd_per_million_tokens", prices, "the price table used for " + used_for);
  return s;
}

std::optional<core::SchemaIssue> price_table_model_issue(const nlohmann::json& parameters) {
  const auto& pricing_model = parameters.at("pricing").at("model");
  const auto& model = parameters.at("model");
  if (pricing_model == model) return std::nullopt;
  return core::SchemaIssue{"parameters.pricing.model", "prices are for " + pricing_model.dump() +
                                                           " but the experiment calls " + model.dump() +
                                                           "; use the price table of the called model"};
}

PriceTable parse_price_table(const nlohmann::json& pricing) {
  const auto& prices = pricing.at("usd_per_million_tokens");
  return {pricing.at("model").get<std::string>(), pricing.at("as_of").get<std::string>(),
          pricing.at("source").get<std::string>(), prices.at("cache_hit").get<double>(),
          prices.at("cache_miss").get<double>(),   prices.at("output").get<double>()};
}

}  // namespace k3lab::api
