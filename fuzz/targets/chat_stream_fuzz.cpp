// The chat-completions stream decoder: SSE framing plus the JSON chunks inside it. Documented error:
// std::runtime_error for a malformed chunk (the decoder is then discarded, as the client does).
#include <stdexcept>
#include <string_view>

#include "fuzz_target.hpp"
#include "k3lab/api/chat_stream_decoder.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view stream(reinterpret_cast<const char*>(data), size);
  k3lab::api::ChatStreamDecoder decoder;
  try {
    for (std::size_t at = 0; at < stream.size(); at += 61) decoder.push(stream.substr(at, 61));
    (void)decoder.finish();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
