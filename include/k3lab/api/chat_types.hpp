#pragma once
// The chat-completion response as k3lab uses it, whether it arrived streamed or in one body.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::api {

struct ToolCall {
  std::string id;
  std::string type = "function";
  std::string name;
  std::string arguments;  // the JSON text exactly as the model produced it

  bool operator==(const ToolCall&) const = default;
};

// Token usage as the endpoint reported it. prompt_tokens includes cached tokens (kimi-cli's rule:
// uncached = prompt_tokens - cached_tokens).
struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t total_tokens = 0;
  std::int64_t cached_tokens = 0;
  std::optional<std::int64_t> reasoning_tokens;  // completion_tokens_details.reasoning_tokens, if sent

  bool operator==(const Usage&) const = default;
};

// Reads a usage object. cached_tokens comes from `usage.cached_tokens` (Moonshot) and otherwise
// from `usage.prompt_tokens_details.cached_tokens` (OpenAI style), else 0.
// Throws std::runtime_error when a count is present but not a non-negative integer.
Usage parse_usage(const nlohmann::json& usage);

struct ChatResponse {
  std::string id;
  std::string model;               // the response `model` field (what actually served the call)
  std::string system_fingerprint;  // a backend revision hint when the platform sends one
  std::string content;
  // Kept in memory only, for exact replay; records keep a hash (see CallRecord).
  std::string reasoning_content;
  bool has_reasoning = false;      // the field was present (possibly empty)
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;       // stop | length | tool_calls | content_filter | ...
  std::optional<Usage> usage;

  // The assistant message to append to the history for an exact replay: role, content,
  // reasoning_content (when the model sent one) and tool_calls.
  nlohmann::json assistant_message() const;

  bool operator==(const ChatResponse&) const = default;
};

// Parses a non-streaming `chat.completion` body. Only choice 0 is read; n > 1 is rejected.
// Throws std::runtime_error naming the missing or mistyped field.
ChatResponse parse_chat_completion(const nlohmann::json& body);

}  // namespace k3lab::api
