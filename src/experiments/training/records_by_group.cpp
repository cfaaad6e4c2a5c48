#include "k3lab/experiments/training/records_by_group.hpp"

#include <map>

namespace k3lab::experiments::training {
namespace {

std::string arm_of(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("arm")) return "(record without spec)";
  return spec.at("arm").get<std::string>();
}

}  // namespace

void add_terminal_records_by_group(const RunRecords& records, const std::optional<std::vector<Unit>>& planned,
                                   const RecordsByGroupTable& spec, report::Page& page) {
  struct Row {
    std::int64_t planned = -1;  // -1: unknown
    std::int64_t result = 0, invalid = 0, failure = 0;
  };
  const auto group_of = [&spec](const nlohmann::json& unit_spec) {
    return spec.group_of ? spec.group_of(unit_spec) : arm_of(unit_spec);
  };
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  auto row = [&](const std::string& label) -> Row& {
    if (!rows.count(label)) order.push_back(label);
    return rows[label];
  };
  if (planned) {
    for (const auto& u : *planned) {
      auto& r = row(group_of(u.spec));
      r.planned = (r.planned < 0 ? 0 : r.planned) + 1;
    }
  }
  for (const auto& record : records.terminal_records()) {
    auto& r = row(group_of(record.value("spec", nlohmann::json())));
    const std::string kind = record.value("kind", "");
    r.result += kind == "result" ? 1 : 0;
    r.invalid += kind == "invalid" ? 1 : 0;
    r.failure += kind == "failure" ? 1 : 0;
  }
  auto table =
      report::make_table(spec.id, spec.title, {spec.group_column, "planned", "result", "invalid", "failure", "open"});
  for (const auto& label : order) {
    const auto& r = rows[label];
    const std::int64_t done = r.result + r.invalid + r.failure;
    table.rows.push_back({label, r.planned < 0 ? report::Cell() : report::Cell(r.planned), r.result, r.invalid,
                          r.failure, r.planned < 0 ? report::Cell() : report::Cell(r.planned - done)});
  }
  table.caption = planned ? spec.caption : "The manifest holds no parameters, so planned counts are not shown.";
  page.add_table(std::move(table));
}

}  // namespace k3lab::experiments::training
