#pragma once
// The router-balance results, from ledger records and the manifest only: per-arm results, paired (by
// seed) bootstrap comparisons of Quantile Balancing with every other arm, the decision rule as a
// table, and load-balance and loss charts of all four arms together.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::router_balance {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::router_balance
