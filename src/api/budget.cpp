#include "k3lab/api/budget.hpp"

#include <string>

namespace k3lab::api {
namespace {

std::string to_decimal(unsigned __int128 value) {
  if (value == 0) return "0";
  std::string digits;
  while (value > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(value % 10)));
    value /= 10;
  }
  return digits;
}

}  // namespace

void budget_check(std::uint64_t prompt_tokens, std::uint64_t framing_tokens,
                  std::uint64_t max_completion_tokens, std::uint64_t total_budget) {
  if (total_budget == 0) throw std::invalid_argument("token budget is 0; set a positive total budget");
  if (max_completion_tokens == 0) {
    throw std::invalid_argument("max_completion_tokens is 0; reserve completion capacity inside the budget");
  }
  // 128-bit sum: three 64-bit terms cannot overflow it.
  const unsigned __int128 sum = static_cast<unsigned __int128>(prompt_tokens) + framing_tokens +
                                max_completion_tokens;
  if (sum <= total_budget) return;
  throw BudgetExceeded("request exceeds its token budget by " + to_decimal(sum - total_budget) + ": prompt " +
                       std::to_string(prompt_tokens) + " + framing " + std::to_string(framing_tokens) +
                       " + max_completion_tokens " + std::to_string(max_completion_tokens) + " > budget " +
                       std::to_string(total_budget) +
                       "; shorten the prompt or lower max_completion_tokens (prompts are never truncated)");
}

}  // namespace k3lab::api
