#include "k3lab/api/chat_stream_decoder.hpp"

#include <utility>

namespace k3lab::api {

ChatStreamDecoder::ChatStreamDecoder(std::function<void()> on_first_token)
    : on_first_token_(std::move(on_first_token)),
      parser_([this](const SseEvent& event) {
        // Only the default event type carries chunks. An `error` event is recorded; other named
        // events (none seen from Moonshot) are skipped rather than misread as chunks.
        if (event.event == "error") {
          accumulator_.add_error_event(event.data);
          return;
        }
        if (!event.event.empty() && event.event != "message") return;
        accumulator_.add_data(event.data);
        if (!token_seen_ && accumulator_.has_token()) {
          token_seen_ = true;
          if (on_first_token_) on_first_token_();
        }
      }) {}

void ChatStreamDecoder::push(std::string_view bytes) { parser_.push(bytes); }

}  // namespace k3lab::api
