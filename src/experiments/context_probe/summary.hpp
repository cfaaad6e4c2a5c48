#pragma once
// The context-probe report page, from the manifest and ledger only: validator pass rate by family x
// budget x stratum with Wilson intervals, evidence coverage, time to first token, latency, tokens,
// cost per successful task (priming calls counted), pass-rate-vs-budget charts per family with cold
// and warm as separate series (never averaged), the protocol's decision rule, the interpretation
// boundary sentence filled in from the data, and what the run cannot say.
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::context_probe {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::context_probe
