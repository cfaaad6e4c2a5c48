#include "per_head_muon/summary.hpp"

#include "per_head_muon/parameters.hpp"
#include "per_head_muon/units.hpp"
#include "k3lab/experiments/records_by_group.hpp"

namespace k3lab::experiments::per_head_muon {

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  RecordsByGroupTable table;
  table.id = "terminal-records-by-phase-and-arm";
  table.title = "Terminal records by phase and arm";
  table.group_column = "phase / arm";
  table.group_of = [](const nlohmann::json& spec) {
    if (!spec.is_object() || !spec.contains("arm")) return std::string("(record without spec)");
    return spec.value("phase", "?") + " / " + spec.at("arm").get<std::string>();
  };
  table.caption =
      "Confirmatory runs use each arm's configuration selected by mean pilot validation loss; no optimizer is retuned after confirmatory results are opened.";
  std::optional<std::vector<Unit>> planned;
  if (records.manifest.contains("parameters")) {
    planned = enumerate_units(parse_parameters(records.manifest.at("parameters")));
  }
  add_terminal_records_by_group(records, planned, table, page);
}

}  // namespace k3lab::experiments::per_head_muon
