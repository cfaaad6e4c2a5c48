#include "attn_res/summary.hpp"

#include "attn_res/parameters.hpp"
#include "attn_res/units.hpp"
#include "k3lab/experiments/records_by_group.hpp"

namespace k3lab::experiments::attn_res {

void summarise_run(const core::Protocol&, const RunRecords& records, report::Page& page) {
  RecordsByGroupTable table;
  table.caption =
      "Seeds are paired across the three arms; a crash or OOM is a recorded arm failure, never a silently shrunk batch.";
  std::optional<std::vector<Unit>> planned;
  if (records.manifest.contains("parameters")) {
    planned = enumerate_units(parse_parameters(records.manifest.at("parameters")));
  }
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::attn_res
