#include "k3lab/experiments/training/gate.hpp"

#include <string>

#include "k3lab/experiments/hardware_check.hpp"

namespace k3lab::experiments::training {

bool smoke_profile(const nlohmann::json& manifest) { return manifest.value("profile", std::string()) == "smoke"; }

bool decision_readable(const RunOutcomes& outcomes, const core::Protocol& protocol, const RunRecords& records,
                       report::Page& page) {
  if (smoke_profile(records.manifest)) {
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
  const auto hardware = terminal_unit_hardware(records);
  if (hardware.mixed() && !mixed_hardware_allowed(protocol)) {
    page.add_text("Decision rule: not evaluated: units ran on " + std::to_string(hardware.recorded.size()) +
                  " hardware fingerprints; an arm's advantage could be the machine's (see Hardware above). The "
                  "protocol compares arms on one machine configuration unless its controls.mixed_hardware is "
                  "\"allowed\". Rerun the units of the other fingerprints on one configuration.");
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
