// Trace CSV import (BurstGPT and Azure formats, strict and skipping bad rows). Documented errors:
// std::runtime_error / std::invalid_argument naming the row.
#include <sstream>
#include <stdexcept>
#include <string>

#include "fuzz_target.hpp"
#include "k3lab/sim/trace_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  k3lab::sim::CsvImportOptions options;
  options.format = data[0] & 1 ? k3lab::sim::CsvTraceFormat::Azure : k3lab::sim::CsvTraceFormat::BurstGpt;
  options.skip_bad_rows = (data[0] & 2) != 0;
  std::istringstream in(text);
  try {
    (void)k3lab::sim::import_trace_csv(in, "fuzz", options);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
