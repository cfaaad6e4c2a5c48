#pragma once
// parameters.pricing of the two direct-API experiments (context-probe, agent-replay): the called model's
// prices per 1M tokens (api.md section 1.9) and where they come from, as schema, check and typed value.
// A call costs cached * cache_hit + (prompt - cached) * cache_miss + completion * output, per 1e6
// tokens; prompt_tokens includes the cached tokens and reasoning is billed inside completion_tokens.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::api {

struct PriceTable {
  std::string model;
  std::string as_of;
  std::string source;
  double cache_hit = 0;   // USD per 1M prompt tokens served from the context cache
  double cache_miss = 0;  // USD per 1M prompt tokens not served from it
  double output = 0;      // USD per 1M completion tokens

  // One call's cost; a server reporting more cached than prompt tokens is billed at most its prompt as
  // cache hits.
  double call_usd(std::int64_t prompt_tokens, std::int64_t cached_tokens, std::int64_t completion_tokens) const;
};

// The `pricing` object's schema; `used_for` ends the price table's description ("the price table used
// for ...").
std::shared_ptr<core::Schema> price_table_schema(const std::string& used_for);

// The issue when parameters.pricing is for another model than parameters.model, else nullopt.
std::optional<core::SchemaIssue> price_table_model_issue(const nlohmann::json& parameters);

// parameters.pricing, already validated by the schema.
PriceTable parse_price_table(const nlohmann::json& pricing);

}  // namespace k3lab::api
