#pragma once
// Throughput of the streaming path, printed as numbers (DESIGN.md section 9: benchmarks print,
// tests never time).
#include <ostream>

namespace k3lab::api {

// Parses a synthetic Kimi-shaped stream (about 64 MiB of chat.completion.chunk events, fed in 16 KiB
// network-sized pieces) and prints MB/s for (1) SSE framing alone and (2) framing plus chunk JSON
// parsing and merging (ChatStreamDecoder).
void run_sse_bench(std::ostream& out);

}  // namespace k3lab::api
