#pragma once
// The router-balance page's first table: terminal records by arm, against the plan.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::router_balance {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::router_balance
