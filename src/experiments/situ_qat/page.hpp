#pragma once
// The situ-qat results, from ledger records and the manifest only: per-arm results at the budget,
// paired (by seed) bootstrap comparisons, the decision rule as a table under the shared failure rule
// (training/failure_rule.hpp, docs/verdicts.md), and charts of the tails,
// validation loss and saturation over training tokens. The records table before them is the shared
// one (training/proxy_experiment.hpp).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::situ_qat {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::situ_qat
