#pragma once
// What one call costs under the protocol's price table (api.md section 1.9):
//   cached * cache_hit + (prompt - cached) * cache_miss + completion * output, per 1e6 tokens.
// prompt_tokens includes the cached tokens; reasoning is billed inside completion_tokens.
#include <cstdint>

#include "context_probe/parameters.hpp"

namespace k3lab::experiments::context_probe {

double call_cost_usd(const Pricing& price, std::int64_t prompt_tokens, std::int64_t cached_tokens,
                     std::int64_t completion_tokens);

}  // namespace k3lab::experiments::context_probe
