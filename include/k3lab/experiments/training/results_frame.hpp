#pragma once
// The frame every proxy experiment's results page shares: the terminal records
// read once (classified by the failure rule, results grouped by arm with
// excluded seeds dropped), the rule stated before any result table, and the
// decision table closed the same way (the tally's rows, the verdict row, the
// protocol's decision rule in the caption). A module fills in what is its own
// between them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::training {

template <class M>
struct ResultsFrame {
  std::vector<nlohmann::json> terminal;
  RunOutcomes outcomes;
  ArmRuns<M> runs;  // usable results only: excluded seeds dropped
};

// Reads `records` against the manifest's planned units; `read` gives a result's
// metrics (M).
template <class M>
ResultsFrame<M> read_results(const RunRecords& records, const std::vector<std::string>& arms,
                             const std::function<std::optional<M>(const nlohmann::json&)>& read) {
  ResultsFrame<M> frame;
  frame.terminal = records.terminal_records();
  frame.outcomes = classify_runs(frame.terminal, records.manifest.value("units_planned", std::size_t{0}), arms);
  frame.runs = group_by_arm<M>(frame.terminal, read);
  drop_excluded(frame.runs, frame.outcomes);
  return frame;
}

inline constexpr const char* kNoResultYet =
    "No completed training run yet: the result tables appear once a unit has a result record.";

// States the failure rule; without a usable result yet, says `none_yet` and
// returns false (no tables follow).
bool state_rule_before_results(const RunOutcomes& outcomes, bool any_result, report::Page& page,
                               const std::string& none_yet = kNoResultYet);

// Closes `decision`: the tally's rows, then `verdict_row`; the caption is
// `caption_start` followed by the protocol's decision rule.
void add_decision_table(report::Table decision, const SeedTally& tally, std::vector<report::Cell> verdict_row,
                        const std::string& caption_start, const core::Protocol& protocol, report::Page& page);

}  // namespace k3lab::experiments::training
