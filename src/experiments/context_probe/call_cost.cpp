#include "context_probe/call_cost.hpp"

#include <algorithm>

namespace k3lab::experiments::context_probe {

double call_cost_usd(const Pricing& price, std::int64_t prompt_tokens, std::int64_t cached_tokens,
                     std::int64_t completion_tokens) {
  // A server reporting more cached than prompt tokens is billed at most its prompt as cache hits.
  const double cached = static_cast<double>(std::min(cached_tokens, prompt_tokens));
  const double uncached = static_cast<double>(prompt_tokens) - cached;
  return (cached * price.cache_hit + uncached * price.cache_miss +
          static_cast<double>(completion_tokens) * price.output) /
         1e6;
}

}  // namespace k3lab::experiments::context_probe
