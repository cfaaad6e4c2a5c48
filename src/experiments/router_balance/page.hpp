#pragma once
// The router-balance results, from ledger records and the manifest only: per-arm balance and loss
// over the measured updates, the charts of load, drops and loss together, Quantile Balancing against
// each arm paired by seed, and the decision rule against fixed-step-bias under the shared failure
// rule (training/failure_rule.hpp, docs/verdicts.md). The records table before them is the shared one
// (training/proxy_experiment.hpp).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::router_balance {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::router_balance
