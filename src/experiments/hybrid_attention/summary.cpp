#include "hybrid_attention/summary.hpp"

#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/experiments/records_by_group.hpp"

namespace k3lab::experiments::hybrid_attention {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  RecordsByGroupTable table;
  table.caption =
      "Complete every valid run before reading aggregate results; a run past the safety timeout is incomplete, never a comparison.";
  std::optional<std::vector<Unit>> planned;
  if (records.manifest.contains("parameters")) {
    planned = enumerate_units(parse_parameters(records.manifest.at("parameters")));
  }
  page.add_text(protocol.id + ": terminal records by arm against the plan; the results follow.");
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::hybrid_attention
