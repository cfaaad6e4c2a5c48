#pragma once
// The attn-res results, from the ledger and manifest only: validation loss at the budget per seed
// with the paired relative improvement over ordinary residuals and its paired bootstrap interval;
// stored residual memory and throughput against ordinary residuals; Block's share of Full's gain
// beside their memory ratio; depth-attention statistics; gradient norms by depth; the
// validation-loss chart; and the predeclared decision rule under the shared failure rule
// (training/failure_rule.hpp, docs/verdicts.md): read only once every planned run has ended, a failed
// run a seed lost by its arm. The records table before them is the shared one
// (training/proxy_experiment.hpp).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::attn_res {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::attn_res
