#include "cli/common.hpp"

#include <algorithm>

#include "k3lab/report/svg.hpp"

namespace k3lab::cli {

LoadedProtocol load(const std::string& id) {
  auto experiment = experiments::make_experiment(id);
  auto protocol = core::load_protocol(core::protocol_path(id), &experiment->parameter_schema());
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

void print_details(const nlohmann::json& details, std::ostream& out, int indent) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (auto it = details.begin(); it != details.end(); ++it) {
    if (it->is_object()) {
      out << pad << it.key() << ":\n";
      print_details(*it, out, indent + 2);
    } else if (it->is_string()) {
      out << pad << it.key() << ": " << it->get<std::string>() << "\n";
    } else {
      out << pad << it.key() << ": " << it->dump() << "\n";
    }
  }
}

}  // namespace k3lab::cli
