#pragma once
// Regenerates every report page from run directories alone (manifests and ledgers).
#include <filesystem>
#include <string>
#include <vector>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

// The page for one run directory: header from the manifest, tables and charts from the module's summary.
report::Page build_page(const std::filesystem::path& run_dir, const std::filesystem::path& runs_root,
                        const Catalog& catalog);

// A run dir the report could not render: a damaged run dir (core::DamagedRunDir), or one whose ledger
// or manifest its module cannot read.
struct DamagedRun {
  std::string experiment_id;
  std::filesystem::path run_dir;
  std::string error;
};

struct ReportOutcome {
  std::vector<report::IndexEntry> entries;  // every index entry, the damaged runs' included
  std::vector<DamagedRun> damaged;
  // Rendered runs whose ledger holds more than one terminal record for a unit: the page shows them in its
  // failure log under a LEDGER ERROR status, and `report` exits non-zero (a person must decide).
  std::vector<DamagedRun> ledger_errors;
};

// The status prefix of a page whose ledger has duplicate terminal records.
inline constexpr const char* kLedgerErrorStatus = "LEDGER ERROR";

// Renders the latest run of every experiment and profile under runs_root into out_root, plus the index.
// A run dir that cannot be rendered does not stop the others: it gets an index entry with its error
// and a note page under out_root/damaged/ (rewritten on every report), and is listed in `damaged`.
ReportOutcome build_reports(const std::filesystem::path& runs_root, const std::filesystem::path& out_root,
                            const Catalog& catalog);

}  // namespace k3lab::experiments
