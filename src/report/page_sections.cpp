// The facts a page states in both renderings (src/report/page_sections.hpp).
#include "page_sections.hpp"

#include <map>
#include <utility>

namespace k3lab::report::detail {

namespace {

void flatten_json(const nlohmann::json& value, const std::string& key,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [child_key, child] : value.items()) {
      flatten_json(child, key.empty() ? child_key : key + "." + child_key, out);
    }
  } else if (value.is_string()) {
    out.emplace_back(key, value.get<std::string>());
  } else {
    out.emplace_back(key, dump_json(value, -1));
  }
}

std::string shown_reason(const LogEntry& entry) {
  return entry.reason.empty() ? std::string("(no reason recorded)") : entry.reason;
}

}  // namespace

std::string dump_json(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string page_title(const Page& page) { return page.title.empty() ? page.experiment_id : page.title; }

std::string protocol_statement(const Page& page) {
  if (page.frozen) {
    return page.frozen_detail.empty() ? std::string("FROZEN (no freeze detail recorded)") : page.frozen_detail;
  }
  std::string detail = page.frozen_detail;
  const std::string prefix = "NOT FROZEN";
  if (detail.rfind(prefix, 0) == 0) detail.erase(0, detail.find_first_not_of(": -", prefix.size()));
  if (detail.empty() || detail.find_first_not_of(' ') == std::string::npos) {
    detail = "this run did not use a frozen protocol; its numbers are for development only and are not evidence.";
  }
  return detail;
}

std::string log_summary(const std::vector<LogEntry>& entries) {
  std::map<std::string, std::size_t> by_reason;
  for (const LogEntry& entry : entries) ++by_reason[shown_reason(entry)];
  std::string out = std::to_string(entries.size()) + (entries.size() == 1 ? " entry" : " entries") + "; by reason: ";
  bool first = true;
  for (const auto& [reason, count] : by_reason) {
    out += (first ? "" : ", ") + reason + " (" + std::to_string(count) + ")";
    first = false;
  }
  return out + ".";
}

Table log_table(const std::string& id, const std::vector<LogEntry>& entries) {
  Table table;
  table.id = id;
  table.columns = {"Unit", "Kind", "Reason", "Detail"};
  for (const LogEntry& entry : entries) {
    table.rows.push_back({Cell(entry.unit), Cell(entry.kind), Cell(shown_reason(entry)), Cell(entry.detail)});
  }
  return table;
}

bool has_provenance(const nlohmann::json& provenance) {
  return !(provenance.is_null() || (provenance.is_object() && provenance.empty()));
}

Table provenance_table(const nlohmann::json& provenance) {
  std::vector<std::pair<std::string, std::string>> rows;
  flatten_json(provenance, "", rows);
  Table table;
  table.id = "provenance";
  table.columns = {"Key", "Value"};
  for (auto& [key, value] : rows) table.rows.push_back({Cell(key.empty() ? std::string("(value)") : key), Cell(value)});
  return table;
}

}  // namespace k3lab::report::detail
