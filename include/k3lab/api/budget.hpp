#pragma once
// The total-request budget of context-probe: prompt + framing + max_completion_tokens must fit.
// Checked before any call; a prompt that does not fit is an error, never silently truncated.
#include <cstdint>
#include <stdexcept>

namespace k3lab::api {

class BudgetExceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws BudgetExceeded, naming each term and the overshoot, when
// prompt_tokens + framing_tokens + max_completion_tokens > total_budget. Throws
// std::invalid_argument when total_budget or max_completion_tokens is 0.
void budget_check(std::uint64_t prompt_tokens, std::uint64_t framing_tokens,
                  std::uint64_t max_completion_tokens, std::uint64_t total_budget);

}  // namespace k3lab::api
