#pragma once
// Real traces from CSV, in two public column formats:
//   BurstGPT:  Timestamp, Model, Request tokens, Response tokens, Total tokens, Log Type
//              (Timestamp in seconds from the trace start)
//   Azure LLM inference (2023/2024): TIMESTAMP, ContextTokens, GeneratedTokens
//              (TIMESTAMP as "YYYY-MM-DD HH:MM:SS[.fraction]", UTC)
// Columns are found by header name (extra columns are ignored). Arrival times become integer
// microseconds from the earliest row; rows are stably sorted by time. A bad row is an error naming
// the line, the column and the fix, unless skip_bad_rows is set, in which case it is counted.
#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "k3lab/sim/trace.hpp"

namespace k3lab::sim {

enum class CsvTraceFormat { BurstGpt, Azure };
CsvTraceFormat parse_csv_trace_format(const std::string& name);  // "burstgpt" | "azure"

struct CsvImportOptions {
  CsvTraceFormat format = CsvTraceFormat::BurstGpt;
  bool skip_bad_rows = false;
};

struct CsvImportReport {
  std::uint64_t data_rows = 0;
  std::uint64_t imported = 0;
  std::uint64_t skipped = 0;
  std::uint64_t out_of_order = 0;      // rows earlier than the row before them (sorted on import)
  std::vector<std::string> problems;   // the first few skipped-row messages
};

Trace import_trace_csv(std::istream& in, const std::string& name, const CsvImportOptions& options,
                       CsvImportReport* report = nullptr);
Trace import_trace_csv_file(const std::filesystem::path& path, const CsvImportOptions& options,
                            CsvImportReport* report = nullptr);

// Microseconds since 1970-01-01 for "YYYY-MM-DD HH:MM:SS[.fraction]" (also 'T' separator, trailing
// 'Z' or "+00:00"); throws std::invalid_argument describing the expected form.
std::int64_t parse_utc_timestamp_us(const std::string& text);

}  // namespace k3lab::sim
