#pragma once
// The context-probe page until the runner lands: terminal records by stratum and role, against the plan.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::context_probe {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::context_probe
