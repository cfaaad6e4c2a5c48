#include "context_probe/summary.hpp"

#include <map>

#include "context_probe/parameters.hpp"
#include "context_probe/units.hpp"

namespace k3lab::experiments::context_probe {
namespace {

// Scored cells are reported per stratum; priming calls separately, because they are not scored.
std::string row_label(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("arm")) return "(record without spec)";
  const std::string arm = spec.at("arm").get<std::string>();
  return spec.value("role", "") == "prime" ? arm + " (priming calls)" : arm + " (scored cells)";
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
  table.id = "terminal-records-by-stratum";
  table.title = "Terminal records by cache stratum";
  table.columns = {"stratum", "planned", "result", "invalid", "failure", "open"};
  for (const auto& label : order) {
    const auto& r = rows[label];
    const std::int64_t done = r.result + r.invalid + r.failure;
    table.rows.push_back({label, r.planned < 0 ? report::Cell() : report::Cell(r.planned), r.result, r.invalid,
                          r.failure, r.planned < 0 ? report::Cell() : report::Cell(r.planned - done)});
  }
  table.caption = has_plan ? "Cold and warm strata are separate results and are never averaged together."
                           : "The manifest holds no parameters, so planned counts are not shown.";
  page.add_text("Cold-prefix and warm-prefix cells answer different questions and are reported separately (" +
                protocol.id + " runner not built yet: only record counts are shown).");
  page.add_table(std::move(table));
}

}  // namespace k3lab::experiments::context_probe
