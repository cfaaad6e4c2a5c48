#include "k3lab/experiments/training/results_frame.hpp"

namespace k3lab::experiments::training {

bool state_rule_before_results(const RunOutcomes& outcomes, bool any_result, report::Page& page,
                               const std::string& none_yet) {
  add_failure_rule(outcomes, page);
  if (!any_result) page.add_text(none_yet);
  return any_result;
}

void add_decision_table(report::Table decision, const SeedTally& tally, std::vector<report::Cell> verdict_row,
                        const std::string& caption_start, const core::Protocol& protocol, report::Page& page) {
  for (auto& row : tally_rows(tally)) decision.rows.push_back({row[0], row[1], row[2]});
  decision.rows.push_back(std::move(verdict_row));
  decision.caption = caption_start + protocol.document.value("decision_rule", std::string());
  page.add_table(std::move(decision));
}

}  // namespace k3lab::experiments::training
