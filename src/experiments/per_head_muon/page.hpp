#pragma once
// The per-head-muon results from manifest and ledger only: the pilot selection, per-arm confirmatory
// results, Per-Head Muon against standard Muon paired by seed, the decision rule under the shared
// failure rule (training/failure_rule.hpp, docs/verdicts.md), loss charts. The
// records table before them is the shared one (training/proxy_experiment.hpp).
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::per_head_muon {

void add_results(const core::Protocol& protocol, const RunRecords& records, report::Page& page);

}  // namespace k3lab::experiments::per_head_muon
