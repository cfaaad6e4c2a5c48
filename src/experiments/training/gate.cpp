#include "k3lab/experiments/training/gate.hpp"

#include <string>

namespace k3lab::experiments::training {

bool smoke_profile(const nlohmann::json& manifest) { return manifest.value("profile", std::string()) == "smoke"; }

bool decision_readable(const RunOutcomes& outcomes, const nlohmann::json& manifest, report::Page& page) {
  if (smoke_profile(manifest)) {
    page.add_text("Decision rule: not evaluated on the smoke profile. Its toy sizes exercise the code path; what the "
                  "rule would say at full scale is not evaluated here.");
    return false;
  }
  if (!outcomes.complete()) {
    page.add_text("Decision rule: not evaluated (" + outcomes.partial() +
                  " have a terminal record). The protocol reads the comparison only once every planned run has "
                  "ended; a failed run is an outcome of its arm, an open run is not yet anything.");
    return false;
  }
  return true;
}

void label_partial(report::Page& page, std::size_t first_block, std::size_t ended, std::size_t planned) {
  if (planned > 0 && ended >= planned) return;
  const std::string label = " (" + partial_label(ended, planned) + ")";
  for (std::size_t i = first_block; i < page.blocks.size(); ++i) {
    auto& block = page.blocks[i];
    if (block.kind == report::Block::Kind::Table) block.table.title += label;
    if (block.kind == report::Block::Kind::Chart) block.chart.title += label;
  }
}

}  // namespace k3lab::experiments::training
