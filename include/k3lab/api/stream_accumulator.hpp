#pragma once
// Merges the `chat.completion.chunk` objects of one streamed call into one ChatResponse.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_types.hpp"

namespace k3lab::api {

// An `{"error": {...}}` object the server sent inside the stream instead of a chunk.
struct StreamError {
  std::string type;
  std::string message;
};

class StreamAccumulator {
 public:
  // One SSE `data:` payload: a chunk's JSON text, or the `[DONE]` terminator.
  // Throws std::runtime_error on malformed JSON or a chunk this reader cannot merge.
  void add_data(std::string_view data);

  // Merges one parsed chunk:
  //  - content and reasoning_content deltas are appended;
  //  - tool_calls deltas are merged by their `index`: id, type and name are set by the first
  //    fragment that carries them (an identical repeat is accepted, a different value is an
  //    error), arguments fragments are concatenated in arrival order;
  //  - finish_reason and model: the last non-null value;
  //  - usage: read from top-level `usage` or `choices[0].usage`, whichever the chunk carries; a
  //    later usage replaces an earlier one (Moonshot repeats the final usage in a trailing chunk),
  //    so usage is never counted twice.
  void add_chunk(const nlohmann::json& chunk);

  // The payload of an SSE event named `error`: recorded as the stream's error, whatever its shape.
  void add_error_event(std::string_view data);

  bool done() const { return done_; }  // `[DONE]` was seen
  std::size_t chunks() const { return chunks_; }
  // A content, reasoning or tool-call delta has arrived (the first-token moment).
  bool has_token() const { return has_token_; }
  const std::optional<StreamError>& error() const { return error_; }

  // The merged response so far (tool calls in index order).
  ChatResponse response() const;

 private:
  ChatResponse base_;
  std::map<long long, ToolCall> tool_calls_;
  bool done_ = false;
  bool has_token_ = false;
  std::size_t chunks_ = 0;
  std::optional<StreamError> error_;
};

}  // namespace k3lab::api
