#pragma once
// Every run of one experiment and profile on the report, none dropped (docs/verdicts.md, "Every run
// on the report"): the latest complete run is the headline, rendered at the experiment's page folder;
// every other run (earlier, stopped, incomplete) is rendered beside it under runs/<run dir name>/, and
// each page lists all of them with their status, window rule and failure count.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "k3lab/report/page.hpp"

namespace k3lab::experiments {

// One rendered run of an experiment and profile, in run-dir order (oldest first).
struct RunPage {
  report::Page page;
  bool complete = false;        // every planned unit has a terminal record and no window rule stopped it
  std::string window_rule;      // the reason the window rule stopped the run, empty if it did not
  std::size_t failures = 0;     // terminal failure records
};

// The headline: the latest complete run, or the latest run when none is complete.
std::size_t headline_run(const std::vector<RunPage>& runs);

// Where a run other than the headline is rendered, relative to the headline's page folder.
std::filesystem::path other_run_folder(const report::Page& page);

// Sets every page's run note and Runs section (links relative to each page's own folder) and the
// report-root link of the pages rendered under runs/.
void link_run_history(std::vector<RunPage>& runs, std::size_t headline);

}  // namespace k3lab::experiments
