#pragma once
// The agent-replay page: per-arm tables (records, task success with Wilson intervals and pass^k,
// duplicate mutations, unexpected tool names, unmatched tool calls, retries and error classes,
// cached-token ratio, cost per completed task), charts, the API errors observed in this window, the
// paired fault-versus-control comparison of the decision rule, the API window, the simulated
// endpoint's assumptions, and the seed's interpretation boundary.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::agent_replay {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::agent_replay
