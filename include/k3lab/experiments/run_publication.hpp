#pragma once
// The publication contract on every page (docs/verdicts.md, "Reproduce"): the source revision (a dirty
// tree labelled), the analysis that rendered the page against the one frozen with the protocol, the
// exact commands (set up, run, regenerate), the hardware, and wall time and tokens per run and in total.
#include <cstddef>
#include <string>

#include "k3lab/core/ledger_records.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

// Terminal units beyond this many are summarised without a per-unit table (the ledger keeps each).
inline constexpr std::size_t kMaxUnitsListed = 200;

// Fills page.reproduce from the run's manifest and ledger; `terminal` is records.terminal_records(),
// which the caller has already read.
void add_reproduce_section(const RunRecords& records, const core::LedgerRecords& terminal, report::Page& page);

// What the page says about its analysis: this build's version and sources' sha256, and whether they
// equal the analysis frozen with the protocol when the run started (the manifest's freeze record).
std::string analysis_statement(const nlohmann::json& manifest);

// The runs folder (`--out`) of the command line the manifest recorded, quoted for a shell when it needs it,
// or "" when the run used the default: what hints repeat so that following them finds the same run.
std::string recorded_runs_folder(const nlohmann::json& manifest);

// `build/k3lab run <id> --profile <profile>` plus the recorded --out: the command that resumes the run.
std::string resume_command(const nlohmann::json& manifest, const std::string& id, const std::string& profile);

}  // namespace k3lab::experiments
