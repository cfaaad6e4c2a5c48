#pragma once
// The hybrid-attention results: per-arm tables (seed mean with a Student-t 95% interval), the
// quality/memory frontier with per-seed points, retrieval and loss beyond the training window, and
// the protocol's predeclared decision rule under the shared failure rule (training/failure_rule.hpp,
// docs/verdicts.md): read only once every planned run has ended, a failed run a seed lost by its arm.
// The records table before them is the shared one (training/proxy_experiment.hpp).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::hybrid_attention {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::hybrid_attention
