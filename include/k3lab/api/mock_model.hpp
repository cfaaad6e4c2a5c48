#pragma once
// The pluggable "model" behind the mock server: a deterministic function from the request to a
// reply. Experiments plug in their own (a long-context reader that answers from the prompt, an agent
// that emits tool calls); echo_model() is the default.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_types.hpp"

namespace k3lab::api {

// An HTTP error the model wants returned instead of a completion.
struct MockError {
  int status = 400;
  std::string type = "invalid_request_error";
  std::string message;
};

struct MockReply {
  std::string content;
  std::string reasoning_content;  // empty: no reasoning field is sent
  std::vector<ToolCall> tool_calls;
  std::string finish_reason;      // empty: "tool_calls" when there are tool calls, else "stop"
  std::optional<MockError> error;
};

// Called concurrently from the server's threads: must be thread-safe, and should be a pure function
// of the request for determinism.
using MockModel = std::function<MockReply(const nlohmann::json& request)>;

// The text of a message's content: a string, or the concatenated text parts of an array.
std::string message_text(const nlohmann::json& message);

// Replies with the text of the last user message. With thinking on, reasoning_content is a short
// fixed sentence naming the prompt's message count, so replay and hashing have something to carry.
MockModel echo_model();

}  // namespace k3lab::api
