#pragma once
// Token counts without the model's vocabulary.
//
// Two different numbers, for two different jobs:
//  - approx_token_count: ceil(bytes / 4). The mock server's usage accounting and the client's
//    token-rate limiter use it. It is an estimate (English text runs about 4 bytes per token) and
//    can undercount real tokens.
//  - *_upper_bound: never below the real count. A byte-level BPE starts from one token per UTF-8
//    byte and merges only reduce the count, so the byte count bounds the tokens of any text; chat
//    framing adds a fixed allowance per message. Budgets (budget_check) use these when no
//    vocabulary file is loaded.
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

namespace k3lab::api {

inline constexpr std::uint64_t kApproxBytesPerToken = 4;

// ceil(bytes / 4).
std::uint64_t approx_token_count(std::uint64_t bytes);
inline std::uint64_t approx_token_count(std::string_view text) { return approx_token_count(text.size()); }

// UTF-8 bytes of the text: an upper bound on byte-level BPE tokens.
inline std::uint64_t token_upper_bound(std::string_view text) { return text.size(); }

// Framing allowance per chat message. Kimi's template wraps a message as
// <|im_{role}|>{role}<|im_middle|>{content}<|im_end|>: three special tokens plus a role name of one
// or two tokens. 16 leaves room for tool-call wrappers and the name/id fields' punctuation.
inline constexpr std::uint64_t kFramingTokensPerMessage = 16;
// The assistant turn opener the server appends after the last message, plus BOS-style markers.
inline constexpr std::uint64_t kFramingTokensPerRequest = 16;

std::uint64_t framing_upper_bound(std::uint64_t message_count);

struct RequestTokenBound {
  std::uint64_t text_tokens = 0;     // content, reasoning, tool calls, tool declarations
  std::uint64_t framing_tokens = 0;  // framing_upper_bound(messages)
  std::uint64_t total() const { return text_tokens + framing_tokens; }
};

// Upper bound on the prompt tokens of a chat request body, from its messages and tools.
// Message text (string content or text parts, reasoning_content, name, tool_call_id, tool call names
// and arguments) counts its bytes. Tool declarations count their compact JSON bytes, plus one per
// ',' and ':' (a renderer may add a space after each), with non-ASCII bytes counted 3x (a renderer
// may escape them as \uXXXX). Throws std::invalid_argument when `messages` is missing or malformed.
RequestTokenBound request_token_upper_bound(const nlohmann::json& request);

}  // namespace k3lab::api
