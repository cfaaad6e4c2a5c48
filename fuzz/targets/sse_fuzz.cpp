// The SSE parser: any bytes, split into chunks at places the input itself chooses. Besides not
// crashing, the events must not depend on how the stream was chunked (a differential check against
// one push of the whole stream).
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_target.hpp"
#include "k3lab/api/sse_parser.hpp"

namespace {

std::vector<std::string> events_of(std::string_view stream, std::size_t chunk) {
  std::vector<std::string> events;
  k3lab::api::SseParser parser([&](const k3lab::api::SseEvent& e) {
    events.push_back(std::string(e.event) + '\x1f' + std::string(e.data) + '\x1f' + std::string(e.id));
  });
  for (std::size_t at = 0; at < stream.size(); at += chunk) parser.push(stream.substr(at, chunk));
  events.push_back(parser.finish() ? "<boundary>" : "<torn>");
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t chunk = 1 + data[0] % 7;  // the first byte chooses the chunking
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (events_of(stream, chunk) != events_of(stream, stream.size() + 1)) std::abort();
  return 0;
}
