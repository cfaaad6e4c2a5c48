#pragma once
// Token estimation for sizing context-probe prompts.
//
// Fixtures are sized with a pluggable estimator so that an exact tokenizer (for example the provider's
// /tokenizers/estimate-token-count endpoint, or a local tokenizer) can replace the default. The
// default is a conservative byte bound: tokens = ceil(bytes / bytes_per_token) with 3.0 bytes per
// token. Our generated text is lower-case common English words (about 5-6 bytes per token in
// 100k+-vocabulary BPE tokenizers) plus evidence ids and digits (about 2 bytes per token), so 3.0
// over-estimates the true count for these fixtures: a prompt sized to N estimated tokens should hold
// fewer than N real tokens. It is a bound for OUR text, not for arbitrary text (byte-level BPE can
// reach 1 token per byte). Calibrate with a real tokenizer before a paid run.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace k3lab::validate {

using TokenCounter = std::function<std::size_t(std::string_view)>;

// A named token counter; the name is recorded in every fixture description.
struct TokenEstimator {
  std::string name;
  TokenCounter count;

  std::size_t operator()(std::string_view text) const { return count(text); }
};

inline constexpr double kDefaultBytesPerToken = 3.0;

// ceil(bytes / bytes_per_token). Throws std::invalid_argument unless 1 <= bytes_per_token <= 16.
TokenEstimator conservative_byte_estimator(double bytes_per_token = kDefaultBytesPerToken);

// Wraps an exact tokenizer. Throws std::invalid_argument when `count` is empty or `name` is empty.
TokenEstimator custom_token_estimator(std::string name, TokenCounter count);

// The prompt budget inside a total request budget: request_budget - max_completion_tokens -
// framing_tokens (role markers, message framing). The seed's 1M arm reserves completion capacity
// instead of sending a full 1M-token prompt. Throws std::invalid_argument when nothing is left.
std::size_t prompt_token_budget(std::size_t request_budget, std::size_t max_completion_tokens,
                                std::size_t framing_tokens);

}  // namespace k3lab::validate
