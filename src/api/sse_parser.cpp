#include "k3lab/api/sse_parser.hpp"

#include <cstring>
#include <utility>

namespace k3lab::api {

SseParser::SseParser(Handler on_event) : on_event_(std::move(on_event)) {}

void SseParser::push(std::string_view bytes) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (skip_leading_lf_ && p < end) {
    if (*p == '\n') ++p;
    skip_leading_lf_ = false;
  }
  while (p < end) {
    const auto* lf = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const char* segment_end = lf ? lf : end;
    // A lone CR is also a line terminator; CRLF counts once.
    const auto* cr = static_cast<const char*>(std::memchr(p, '\r', static_cast<std::size_t>(segment_end - p)));
    if (cr) {
      end_line(p, cr);
      p = cr + 1;
      if (p == end) {
        skip_leading_lf_ = true;
      } else if (*p == '\n') {
        ++p;
      }
      continue;
    }
    if (!lf) {
      partial_line_.append(p, static_cast<std::size_t>(end - p));
      return;
    }
    end_line(p, lf);
    p = lf + 1;
  }
}

bool SseParser::finish() {
  const bool clean = partial_line_.empty() && !has_data_;
  partial_line_.clear();
  data_.clear();
  event_type_.clear();
  has_data_ = false;
  skip_leading_lf_ = false;
  return clean;
}

void SseParser::end_line(const char* begin, const char* end) {
  if (partial_line_.empty()) {
    process_line(std::string_view(begin, static_cast<std::size_t>(end - begin)));
    return;
  }
  partial_line_.append(begin, static_cast<std::size_t>(end - begin));
  process_line(partial_line_);
  partial_line_.clear();
}

void SseParser::process_line(std::string_view line) {
  if (first_line_) {
    first_line_ = false;
    if (line.size() >= 3 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  }
  if (line.empty()) {
    dispatch();
    return;
  }
  if (line.front() == ':') {
    ++comments_;
    return;
  }
  std::string_view field = line;
  std::string_view value;
  if (const auto colon = line.find(':'); colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_type_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) last_id_.assign(value);
  } else if (field == "retry") {
    long long ms = 0;
    bool digits = !value.empty();
    for (char c : value) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      ms = ms * 10 + (c - '0');
    }
    if (digits) retry_ms_ = ms;
  }
  // Any other field name is ignored, as the spec requires.
}

void SseParser::dispatch() {
  if (!has_data_) {
    event_type_.clear();
    return;
  }
  ++events_;
  on_event_(SseEvent{event_type_, data_, last_id_});
  data_.clear();
  event_type_.clear();
  has_data_ = false;
}

}  // namespace k3lab::api
