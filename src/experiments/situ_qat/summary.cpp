#include "situ_qat/summary.hpp"

#include "situ_qat/parameters.hpp"
#include "situ_qat/units.hpp"
#include "k3lab/experiments/records_by_group.hpp"

namespace k3lab::experiments::situ_qat {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  RecordsByGroupTable table;
  table.caption =
      "Seeds are paired across the two arms; a numerical failure stays in the result unless a predeclared logging defect caused it.";
  std::optional<std::vector<Unit>> planned;
  if (records.manifest.contains("parameters")) {
    planned = enumerate_units(parse_parameters(records.manifest.at("parameters")));
  }
  page.add_text(protocol.id + ": terminal records by arm against the plan; the results follow.");
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::situ_qat
