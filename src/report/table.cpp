// Tables as Markdown (for pages and `-o md`), CSV (RFC 4180 quoting) and JSON (array of row objects).
#include <set>
#include <stdexcept>
#include <string>
#include <variant>

#include "k3lab/report/page.hpp"
#include "k3lab/report/svg.hpp"
#include "table_cells.hpp"

namespace k3lab::report {

namespace {

std::string table_name(const Table& table) {
  return table.id.empty() ? std::string("table") : "table '" + table.id + "'";
}

bool is_number(const Cell& cell) {
  return std::holds_alternative<double>(cell.value) || std::holds_alternative<std::int64_t>(cell.value);
}

// The cell as plain text: doubles with the cell's significant digits, missing values empty.
std::string cell_text(const Cell& cell) {
  if (const auto* s = std::get_if<std::string>(&cell.value)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&cell.value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&cell.value)) {
    if (cell.precision < 1 || cell.precision > 17) {
      throw std::invalid_argument("a table cell asks for " + std::to_string(cell.precision) +
                                  " significant digits; use 1..17");
    }
    return format_significant(*d, cell.precision);
  }
  return "";
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += "<br>";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace

namespace detail {

void check_table(const Table& table) {
  if (table.columns.empty()) {
    throw std::invalid_argument(table_name(table) + " has no columns; set Table::columns before adding rows");
  }
  std::set<std::string> seen;
  for (const std::string& column : table.columns) {
    if (!seen.insert(column).second) {
      throw std::invalid_argument(table_name(table) + " has the column '" + column +
                                  "' twice; column names must be unique (they key the JSON rows)");
    }
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (table.rows[r].size() != table.columns.size()) {
      throw std::invalid_argument(table_name(table) + " row " + std::to_string(r) + " has " +
                                  std::to_string(table.rows[r].size()) + " cells but the table has " +
                                  std::to_string(table.columns.size()) + " columns; give every row one cell per column");
    }
  }
}

std::string reading_text(const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell.value)) return "–";
  if (const auto* i = std::get_if<std::int64_t>(&cell.value)) return group_thousands(*i);
  if (const auto* d = std::get_if<double>(&cell.value)) {
    (void)cell_text(cell);  // validates the precision
    return format_for_reading(*d, cell.precision);
  }
  return cell_text(cell);
}

bool numeric_column(const Table& table, std::size_t column) {
  bool numeric = false;
  for (const auto& row : table.rows) {
    if (std::holds_alternative<std::monostate>(row[column].value)) continue;
    if (!is_number(row[column])) return false;
    numeric = true;
  }
  return numeric;
}

}  // namespace detail

std::string table_markdown(const Table& table) {
  detail::check_table(table);
  std::string out = "|";
  for (const std::string& column : table.columns) out += " " + markdown_cell(column) + " |";
  out += "\n|";
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    // Right-align columns that hold only numbers, as numbers read best that way.
    out += detail::numeric_column(table, c) ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const Cell& cell : row) {
      out += " " + markdown_cell(detail::reading_text(cell)) + " |";
    }
    out += "\n";
  }
  return out;
}

std::string table_csv(const Table& table) {
  detail::check_table(table);
  std::string out;
  for (std::size_t c = 0; c < table.columns.size(); ++c) out += (c ? "," : "") + csv_field(table.columns[c]);
  out += "\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) out += (c ? "," : "") + csv_field(cell_text(row[c]));
    out += "\n";
  }
  return out;
}

nlohmann::json table_json(const Table& table) {
  detail::check_table(table);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      const Cell& cell = row[c];
      nlohmann::json value;  // null for a missing value; NaN/inf also serialise as null
      if (const auto* s = std::get_if<std::string>(&cell.value)) value = *s;
      if (const auto* i = std::get_if<std::int64_t>(&cell.value)) value = *i;
      if (const auto* d = std::get_if<double>(&cell.value)) value = *d;
      object[table.columns[c]] = std::move(value);
    }
    rows.push_back(std::move(object));
  }
  return rows;
}

}  // namespace k3lab::report
