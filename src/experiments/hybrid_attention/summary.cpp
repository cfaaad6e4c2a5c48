#include "hybrid_attention/summary.hpp"

#include <map>

#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/units.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

std::string row_label(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("arm")) return "(record without spec)";
  return spec.at("arm").get<std::string>();
}

}  // namespace

void summarise_run(const core::Protocol& protocol, const RunRecords& records, report::Page& page) {
  struct Row {
    std::int64_t planned = -1;
    std::int64_t result = 0, invalid = 0, failure = 0;
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  auto row = [&](const std::string& label) -> Row& {
    if (!rows.count(label)) order.push_back(label);
    return rows[label];
  };
  const bool has_plan = records.manifest.contains("parameters");
  if (has_plan) {
    for (const auto& u : enumerate_units(parse_parameters(records.manifest.at("parameters")))) {
      auto& r = row(row_label(u.spec));
      r.planned = (r.planned < 0 ? 0 : r.planned) + 1;
    }
  }
  for (const auto& record : records.terminal_records()) {
    auto& r = row(row_label(record.value("spec", nlohmann::json())));
    const std::string kind = record.value("kind", "");
    r.result += kind == "result" ? 1 : 0;
    r.invalid += kind == "invalid" ? 1 : 0;
    r.failure += kind == "failure" ? 1 : 0;
  }
  report::Table table;
  table.id = "terminal-records-by-arm";
  table.title = "Terminal records by arm";
  table.columns = {"arm", "planned", "result", "invalid", "failure", "open"};
  for (const auto& label : order) {
    const auto& r = rows[label];
    const std::int64_t done = r.result + r.invalid + r.failure;
    table.rows.push_back({label, r.planned < 0 ? report::Cell() : report::Cell(r.planned), r.result, r.invalid,
                          r.failure, r.planned < 0 ? report::Cell() : report::Cell(r.planned - done)});
  }
  table.caption = has_plan ? "Complete every valid run before reading aggregate results; a run past the safety timeout is incomplete, never a comparison."
                           : "The manifest holds no parameters, so planned counts are not shown.";
  page.add_text(protocol.id + ": terminal records by arm against the plan; the results follow.");
  page.add_table(std::move(table));
}

}  // namespace k3lab::experiments::hybrid_attention
