#pragma once
// Bytes of a streamed chat completion in, one merged ChatResponse out: SseParser feeding a
// StreamAccumulator, with a hook at the first token (for time-to-first-token).
#include <functional>
#include <string_view>

#include "k3lab/api/sse_parser.hpp"
#include "k3lab/api/stream_accumulator.hpp"

namespace k3lab::api {

class ChatStreamDecoder {
 public:
  // on_first_token runs once, when the first content/reasoning/tool-call delta is merged.
  explicit ChatStreamDecoder(std::function<void()> on_first_token = {});
  ChatStreamDecoder(const ChatStreamDecoder&) = delete;
  ChatStreamDecoder& operator=(const ChatStreamDecoder&) = delete;

  // Throws std::runtime_error on a malformed chunk; the decoder must then be discarded.
  void push(std::string_view bytes);
  // End of the byte stream; true when it ended on an event boundary.
  bool finish() { return parser_.finish(); }

  const StreamAccumulator& accumulator() const { return accumulator_; }
  const SseParser& parser() const { return parser_; }

 private:
  StreamAccumulator accumulator_;
  std::function<void()> on_first_token_;
  bool token_seen_ = false;
  SseParser parser_;
};

}  // namespace k3lab::api
