#pragma once
// Incremental Server-Sent Events parser (WHATWG HTML "event stream interpretation").
// Bytes arrive in arbitrary network chunks: a line, a UTF-8 sequence or a CRLF pair may be split
// anywhere. The parser buffers only the unfinished line, scans with memchr, and reuses its buffers,
// so steady-state parsing does no allocation.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace k3lab::api {

// One dispatched event. The views point into the parser's buffers and are valid only during the
// handler call.
struct SseEvent {
  std::string_view event;  // the `event:` field; empty means the default type "message"
  std::string_view data;   // `data:` lines joined with '\n'
  std::string_view id;     // the last `id:` seen (persists across events, as the spec says)
};

class SseParser {
 public:
  using Handler = std::function<void(const SseEvent&)>;

  explicit SseParser(Handler on_event);

  // Feeds the next bytes of the stream. The handler runs once per complete event.
  void push(std::string_view bytes);

  // Declares the end of the stream. Returns true when it ended on an event boundary; an unfinished
  // event is discarded (spec: "If the file ends in the middle of an event ... not dispatched").
  bool finish();

  std::size_t events_dispatched() const { return events_; }
  std::size_t comment_lines() const { return comments_; }
  // The most recent `retry:` value in milliseconds, or -1 when none was sent.
  long long retry_ms() const { return retry_ms_; }

 private:
  void end_line(const char* begin, const char* end);
  void process_line(std::string_view line);
  void dispatch();

  Handler on_event_;
  std::string partial_line_;  // bytes of a line whose terminator has not arrived yet
  std::string data_;
  std::string event_type_;
  std::string last_id_;
  bool has_data_ = false;
  bool skip_leading_lf_ = false;  // the previous push ended with CR: a following LF belongs to it
  bool first_line_ = true;        // a UTF-8 BOM may open the stream
  std::size_t events_ = 0;
  std::size_t comments_ = 0;
  long long retry_ms_ = -1;
};

}  // namespace k3lab::api
