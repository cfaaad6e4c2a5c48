#pragma once
// Regenerates every report page from run directories alone (manifests and ledgers).
#include <filesystem>
#include <vector>

#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

// The page for one run directory: header from the manifest, tables and charts from the module's summary.
report::Page build_page(const std::filesystem::path& run_dir, const std::filesystem::path& runs_root);

// Renders the latest run of every experiment and profile under runs_root into out_root, plus the index.
// Returns the index entries written.
std::vector<report::IndexEntry> build_reports(const std::filesystem::path& runs_root,
                                              const std::filesystem::path& out_root);

}  // namespace k3lab::experiments
