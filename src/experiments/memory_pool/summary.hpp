#pragma once
// The memory-pool report page: sizes and assumptions, a table per mix and policy (retained trace,
// and mean with a 95% t interval over the seeded traces), the paired decision table, admission /
// queue / stranded-bytes charts of each retained trace, and the seed's interpretation boundary.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::memory_pool {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::memory_pool
