#include "router_balance/summary.hpp"

#include "router_balance/parameters.hpp"
#include "router_balance/units.hpp"
#include "k3lab/experiments/records_by_group.hpp"

namespace k3lab::experiments::router_balance {

void summarise_run(const core::Protocol&, const RunRecords& records, report::Page& page) {
  RecordsByGroupTable table;
  table.caption =
      "Dropped tokens, NaNs and OOMs are outcomes of an arm; a run is excluded only for a predeclared hardware or logging failure shared across arms.";
  std::optional<std::vector<Unit>> planned;
  if (records.manifest.contains("parameters")) {
    planned = enumerate_units(parse_parameters(records.manifest.at("parameters")));
  }
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::router_balance
