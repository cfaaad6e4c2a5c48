#pragma once
// A request trace: arrival times (integer microseconds from the trace start, non-decreasing), prompt
// tokens and output tokens per request. Generated traces and imported real traces look the same.
#include <cstdint>
#include <string>
#include <vector>

namespace k3lab::sim {

struct TraceRecord {
  std::int64_t arrival_us = 0;
  std::uint32_t prompt_tokens = 0;  // >= 1
  std::uint32_t output_tokens = 0;  // >= 0
};

struct Trace {
  std::string source;               // e.g. "generated mix=steady-short trace=retained" or "burstgpt:file.csv"
  std::uint64_t generator_seed = 0; // 0 for imported traces
  std::vector<TraceRecord> records;

  std::size_t size() const { return records.size(); }
  std::int64_t last_arrival_us() const { return records.empty() ? 0 : records.back().arrival_us; }
};

// Throws std::invalid_argument naming the first bad record (time going backwards, empty prompt).
void validate_trace(const Trace& trace);

}  // namespace k3lab::sim
