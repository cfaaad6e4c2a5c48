#include "cli/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "k3lab/report/svg.hpp"

namespace k3lab::cli {

LoadedProtocol load(const std::string& id) {
  auto experiment = experiments::make_experiment(id);
  auto protocol = experiments::load_checked_protocol(*experiment, core::protocol_path(id));
  if (protocol.id != id) {
    throw std::invalid_argument(protocol.path.string() + " declares id \"" + protocol.id + "\", not \"" + id +
                                "\": a protocol file is named after its experiment's id");
  }
  return {std::move(experiment), std::move(protocol)};
}

std::string freeze_label(const core::FreezeStatus& status) {
  if (status.frozen) return "frozen";
  return status.record ? "EDITED after freeze" : "not frozen";
}

namespace {
std::string cell_text(const report::Cell& cell) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "";
        else if constexpr (std::is_same_v<T, std::string>) return v;
        else if constexpr (std::is_same_v<T, double>) return report::format_significant(v, cell.precision);
        else return std::to_string(v);
      },
      cell.value);
}
}  // namespace

void print_table(const report::Table& table, const std::string& format, std::ostream& out) {
  if (format == "md") {
    out << report::table_markdown(table);
    return;
  }
  if (format == "csv") {
    out << report::table_csv(table);
    return;
  }
  if (format == "json") {
    out << report::table_json(table).dump(2) << "\n";
    return;
  }
  std::vector<std::size_t> width(table.columns.size(), 0);
  for (std::size_t c = 0; c < table.columns.size(); ++c) width[c] = table.columns[c].size();
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], cell_text(row[c]).size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < cells.size(); ++c) {
      out << cells[c];
      if (c + 1 < cells.size()) out << std::string(width[c] - cells[c].size() + 2, ' ');
    }
    out << "\n";
  };
  line(table.columns);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (const auto& cell : row) cells.push_back(cell_text(cell));
    line(cells);
  }
}

namespace {

bool key_has(const std::string& key, const char* word) { return key.find(word) != std::string::npos; }

// A plan number as a person reads it: hours to two significant digits, dollars to the cent, whole
// numbers in full grouped by thousands, anything else to four significant digits (grouped from 10,000).
std::string readable_number(const std::string& key, double value) {
  if (key_has(key, "hours")) return report::format_significant(value, 2) + " h";
  if (key_has(key, "usd") || key_has(key, "cost") || key_has(key, "dollars")) {
    char text[64];
    std::snprintf(text, sizeof text, "$%.2f", value);
    return text;
  }
  return report::format_for_reading(value, 4);
}

std::string readable_scalar(const std::string& key, const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number()) return readable_number(key, value.get<double>());
  return value.dump();
}

bool all_scalars(const nlohmann::json& array) {
  return std::all_of(array.begin(), array.end(), [](const nlohmann::json& v) { return !v.is_structured(); });
}

}  // namespace

void print_details(const nlohmann::json& details, std::ostream& out, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (auto it = details.begin(); it != details.end(); ++it) {
    const std::string key = details.is_object() ? it.key() : std::string();
    if (it->is_object()) {
      out << pad << key << ":\n";
      print_details(*it, out, indent + 2);
    } else if (it->is_array() && all_scalars(*it)) {
      std::string items;
      for (const auto& v : *it) items += (items.empty() ? "" : ", ") + readable_scalar(key, v);
      out << pad << key << ": [" << items << "]\n";
    } else if (it->is_array()) {
      // Nested plans, one entry per block ("- " marks where each begins).
      out << pad << key << ":\n";
      for (const auto& entry : *it) {
        if (entry.is_object()) {
          std::ostringstream nested;
          print_details(entry, nested, indent + 4);
          std::string text = nested.str();
          if (text.size() > static_cast<std::size_t>(indent + 2)) text.replace(static_cast<std::size_t>(indent + 2), 2, "- ");
          out << text;
        } else {
          out << pad << "  - " << readable_scalar(key, entry) << "\n";
        }
      }
    } else {
      out << pad << key << ": " << readable_scalar(key, *it) << "\n";
    }
  }
}

}  // namespace k3lab::cli
