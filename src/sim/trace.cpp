#include "k3lab/sim/trace.hpp"

#include <stdexcept>

namespace k3lab::sim {

void validate_trace(const Trace& trace) {
  std::int64_t previous = 0;
  for (std::size_t i = 0; i < trace.records.size(); ++i) {
    const TraceRecord& r = trace.records[i];
    if (r.arrival_us < previous) {
      throw std::invalid_argument("trace " + trace.source + ": record " + std::to_string(i) + " arrives at " +
                                  std::to_string(r.arrival_us) + " us, before the previous record (" +
                                  std::to_string(previous) + " us); arrivals must not go backwards");
    }
    if (r.prompt_tokens == 0) {
      throw std::invalid_argument("trace " + trace.source + ": record " + std::to_string(i) +
                                  " has an empty prompt; every request needs at least one prompt token");
    }
    previous = r.arrival_us;
  }
}

}  // namespace k3lab::sim
