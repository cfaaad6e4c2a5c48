#include "k3lab/api/sse_bench.hpp"

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/api/chat_stream_decoder.hpp"
#include "k3lab/api/sse_parser.hpp"

namespace k3lab::api {
namespace {

// Events shaped like a real stream: mostly short content deltas, some reasoning, occasional
// comments and CRLF, multi-line data now and then.
std::string synthetic_stream(std::size_t target_bytes) {
  std::string out;
  out.reserve(target_bytes + 4096);
  std::size_t i = 0;
  while (out.size() < target_bytes) {
    const bool reasoning = (i % 5) == 0;
    nlohmann::json chunk = {{"id", "chatcmpl-bench"},
                            {"object", "chat.completion.chunk"},
                            {"created", 1767225600},
                            {"model", "kimi-k3"},
                            {"choices",
                             {{{"index", 0},
                               {"delta", {{reasoning ? "reasoning_content" : "content",
                                           "token " + std::to_string(i) + " \xE5\xAD\x97 text"}}},
                               {"finish_reason", nullptr}}}}};
    out += "data: ";
    out += chunk.dump();
    out += (i % 7 == 0) ? "\r\n\r\n" : "\n\n";
    if (i % 101 == 0) out += ": keep-alive\n\n";
    ++i;
  }
  nlohmann::json last = {{"id", "chatcmpl-bench"},
                         {"object", "chat.completion.chunk"},
                         {"model", "kimi-k3"},
                         {"choices", {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", "stop"}}}},
                         {"usage", {{"prompt_tokens", 10}, {"completion_tokens", i}, {"total_tokens", 10 + i}}}};
  out += "data: " + last.dump() + "\n\ndata: [DONE]\n\n";
  return out;
}

template <class Feed>
double megabytes_per_second(const std::string& stream, int repeats, Feed&& feed) {
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) feed();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return static_cast<double>(stream.size()) * repeats / 1e6 / seconds;
}

}  // namespace

void run_sse_bench(std::ostream& out) {
  const std::string stream = synthetic_stream(std::size_t{64} << 20);
  constexpr std::size_t kPiece = 16 * 1024;

  std::size_t events = 0;
  std::size_t data_bytes = 0;
  const double framing = megabytes_per_second(stream, 4, [&] {
    SseParser parser([&](const SseEvent& e) {
      ++events;
      data_bytes += e.data.size();
    });
    for (std::size_t off = 0; off < stream.size(); off += kPiece) {
      parser.push(std::string_view(stream).substr(off, kPiece));
    }
    parser.finish();
  });

  std::size_t content_bytes = 0;
  const double decoding = megabytes_per_second(stream, 1, [&] {
    ChatStreamDecoder decoder;
    for (std::size_t off = 0; off < stream.size(); off += kPiece) {
      decoder.push(std::string_view(stream).substr(off, kPiece));
    }
    decoder.finish();
    content_bytes = decoder.accumulator().response().content.size();
  });

  out << "sse_bench: stream " << stream.size() / (1 << 20) << " MiB, " << events / 4 << " events, fed in "
      << kPiece / 1024 << " KiB pieces\n";
  out << "sse_bench: SSE framing            " << static_cast<long long>(framing) << " MB/s\n";
  out << "sse_bench: framing + JSON merge   " << static_cast<long long>(decoding) << " MB/s (" << content_bytes
      << " content bytes merged)\n";
  if (data_bytes == 0) out << "sse_bench: no data parsed (bug)\n";
}

}  // namespace k3lab::api
