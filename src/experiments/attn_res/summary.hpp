#pragma once
// The attn-res page's record counts: terminal records by arm, against the plan (results_page.hpp adds the results).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::attn_res {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::attn_res
