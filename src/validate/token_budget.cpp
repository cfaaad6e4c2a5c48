#include "k3lab/validate/token_budget.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace k3lab::validate {

TokenEstimator conservative_byte_estimator(double bytes_per_token) {
  if (!(bytes_per_token >= 1.0 && bytes_per_token <= 16.0)) {
    std::ostringstream msg;
    msg << "conservative_byte_estimator: bytes_per_token = " << bytes_per_token
        << " is outside [1, 16]; use the default " << kDefaultBytesPerToken
        << " or plug an exact tokenizer with custom_token_estimator()";
    throw std::invalid_argument(msg.str());
  }
  std::ostringstream name;
  name << "conservative-bytes/" << bytes_per_token;
  return TokenEstimator{name.str(), [bytes_per_token](std::string_view text) {
                          return static_cast<std::size_t>(
                              std::ceil(static_cast<double>(text.size()) / bytes_per_token));
                        }};
}

TokenEstimator custom_token_estimator(std::string name, TokenCounter count) {
  if (name.empty()) {
    throw std::invalid_argument("custom_token_estimator: the estimator name is empty; give it a name that "
                                "identifies the tokenizer (it is recorded in fixture descriptions)");
  }
  if (!count) {
    throw std::invalid_argument("custom_token_estimator('" + name +
                                "'): the counting function is empty; pass a callable that returns the "
                                "token count of a string");
  }
  return TokenEstimator{std::move(name), std::move(count)};
}

std::size_t prompt_token_budget(std::size_t request_budget, std::size_t max_completion_tokens,
                                std::size_t framing_tokens) {
  if (max_completion_tokens + framing_tokens >= request_budget) {
    std::ostringstream msg;
    msg << "prompt_token_budget: max_completion_tokens (" << max_completion_tokens << ") + framing_tokens ("
        << framing_tokens << ") leave no prompt room in a request budget of " << request_budget
        << " tokens; lower max_completion_tokens or raise the budget";
    throw std::invalid_argument(msg.str());
  }
  return request_budget - max_completion_tokens - framing_tokens;
}

}  // namespace k3lab::validate
