// One experiment's report page: index.md and index.html (the same page, from the same data) with the
// evidence header, results, failure log, excluded data and provenance, plus tables/<id>.csv|json and
// charts/<id>.svg. Built fully in memory before anything is written, so a bad page fails without
// leaving a half-rendered folder.
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "k3lab/report/html_page.hpp"
#include "k3lab/report/page.hpp"
#include "output_files.hpp"
#include "page_sections.hpp"

namespace k3lab::report {

void Page::add_text(std::string markdown) {
  Block block;
  block.kind = Block::Kind::Markdown;
  block.markdown = std::move(markdown);
  blocks.push_back(std::move(block));
}

Table make_table(std::string id, std::string title, std::vector<std::string> columns) {
  Table table;
  table.id = std::move(id);
  table.title = std::move(title);
  table.columns = std::move(columns);
  return table;
}

void Page::add_table(Table table) {
  Block block;
  block.kind = Block::Kind::Table;
  block.table = std::move(table);
  blocks.push_back(std::move(block));
}

void Page::add_chart(Chart chart) {
  Block block;
  block.kind = Block::Kind::Chart;
  block.chart = std::move(chart);
  blocks.push_back(std::move(block));
}

namespace {

struct RenderedPage {
  std::string index_md;
  std::string index_html;
  std::map<std::string, std::string> tables;  // file name -> content
  std::map<std::string, std::string> charts;
};

std::string ensure_paragraph(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text + "\n\n";
}

std::string bullet_list(const std::vector<std::string>& items, const std::string& when_empty) {
  if (items.empty()) return "- " + when_empty + "\n";
  std::string out;
  for (const std::string& item : items) out += "- " + item + "\n";
  return out;
}

std::string log_section(const std::string& heading, const std::vector<LogEntry>& entries) {
  std::string out = "## " + heading + "\n\n";
  if (entries.empty()) return out + "none\n\n";
  return out + detail::log_summary(entries) + "\n\n" + table_markdown(detail::log_table(heading, entries)) + "\n";
}

std::string provenance_section(const nlohmann::json& provenance) {
  std::string out = "## Provenance\n\n";
  if (!detail::has_provenance(provenance)) return out + "none recorded (no manifest was available to this page)\n";
  return out + table_markdown(detail::provenance_table(provenance));
}

std::string header(const Page& page) {
  std::string out = "# " + detail::page_title(page) + "\n\n";
  if (page.profile == "smoke") out += std::string("> **") + kSmokeBanner + "**\n\n";
  out += "**Experiment:** `" + page.experiment_id + "` · **Profile:** " +
         (page.profile.empty() ? std::string("(none)") : "`" + page.profile + "`") +
         " · **Evidence class:** " + (page.evidence_class.empty() ? std::string("(not stated)") : page.evidence_class) +
         "\n\n";
  if (page.frozen) {
    out += "> **Protocol:** " + detail::protocol_statement(page) + "\n\n";
  } else {
    out += "> **NOT FROZEN** — " + detail::protocol_statement(page) + "\n\n";
  }
  for (const std::string& label : page.labels) out += "> **WARNING:** " + label + "\n\n";
  out += "**Status:** " + (page.status.empty() ? std::string("(not stated)") : page.status) + "\n\n";
  if (!page.run_dir.empty()) out += "**Run:** `" + page.run_dir + "`\n\n";
  if (!page.run_note.empty()) out += page.run_note + "\n\n";
  out += "## Transfer limit\n\n**Can say**\n\n" + bullet_list(page.can_say, "(nothing stated)") + "\n";
  out += "**Cannot say**\n\n" + bullet_list(page.cannot_say, "(nothing stated)") + "\n";
  return out;
}

// Appends the blocks' Markdown to `md` and their tables and charts to `rendered`; `where` names the
// page in errors (an id used twice on one page, a bad file stem).
void render_blocks(const std::vector<Block>& blocks, const std::string& where, std::string& md,
                   RenderedPage& rendered) {
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const Block& block = blocks[b];
    const std::string at = where + " block " + std::to_string(b);
    switch (block.kind) {
      case Block::Kind::Markdown:
        md += ensure_paragraph(block.markdown);
        break;
      case Block::Kind::Table: {
        const Table& table = block.table;
        detail::check_file_stem(table.id, at + ": table id");
        const std::string csv_name = table.id + ".csv";
        if (rendered.tables.count(csv_name)) {
          throw std::invalid_argument(at + ": table id '" + table.id + "' is used twice on this page; give each table its own id");
        }
        rendered.tables[csv_name] = table_csv(table);
        rendered.tables[table.id + ".json"] = detail::dump_json(table_json(table), 2) + "\n";
        if (!table.title.empty()) md += "### " + table.title + "\n\n";
        md += table_markdown(table) + "\n";
        if (!table.caption.empty()) md += ensure_paragraph(table.caption);
        md += "Data: [tables/" + csv_name + "](tables/" + csv_name + ") · [tables/" + table.id + ".json](tables/" +
              table.id + ".json)\n\n";
        break;
      }
      case Block::Kind::Chart: {
        const Chart& chart = block.chart;
        detail::check_file_stem(chart.id, at + ": chart id");
        const std::string svg_name = chart.id + ".svg";
        if (rendered.charts.count(svg_name)) {
          throw std::invalid_argument(at + ": chart id '" + chart.id + "' is used twice on this page; give each chart its own id");
        }
        rendered.charts[svg_name] = chart_svg(chart);
        const std::string title = chart.title.empty() ? chart.id : chart.title;
        if (!chart.title.empty()) md += "### " + chart.title + "\n\n";
        md += "![" + title + "](charts/" + svg_name + ")\n\n";
        if (!chart.caption.empty()) md += ensure_paragraph(chart.caption);
        break;
      }
    }
  }
}

RenderedPage render_in_memory(const Page& page) {
  detail::check_file_stem(page.experiment_id, "experiment id");
  if (!page.profile.empty()) detail::check_file_stem(page.profile, "profile");

  RenderedPage rendered;
  std::string& md = rendered.index_md;
  const std::string where = "page '" + page.experiment_id + "'";
  md = header(page);
  md += "## Results\n\n";
  if (page.blocks.empty()) md += "none\n\n";
  render_blocks(page.blocks, where, md, rendered);
  md += log_section("Failure log", page.failures);
  md += log_section("Excluded data", page.excluded);
  if (!page.runs.empty()) {
    md += "## Runs\n\n";
    render_blocks(page.runs, where + " (runs)", md, rendered);
  }
  if (!page.reproduce.empty()) {
    md += "## Reproduce\n\n";
    render_blocks(page.reproduce, where + " (reproduce)", md, rendered);
  }
  md += provenance_section(page.provenance);
  rendered.index_html = page_html(page);
  return rendered;
}

// Removes generated files of a previous render that this render no longer produces, so the folder
// (and the index that lists its charts) always matches the page.
void remove_stale(const std::filesystem::path& folder, const std::set<std::string>& extensions,
                  const std::map<std::string, std::string>& keep) {
  if (!std::filesystem::is_directory(folder)) return;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && extensions.count(entry.path().extension().string()) && !keep.count(name)) {
      stale.push_back(entry.path());
    }
  }
  for (const auto& path : stale) std::filesystem::remove(path);
}

}  // namespace

std::filesystem::path page_folder(const Page& page, const std::filesystem::path& out_dir) {
  return out_dir / (page.profile.empty() ? page.experiment_id : page.experiment_id + "-" + page.profile);
}

void render_page_into(const Page& page, const std::filesystem::path& folder) {
  const RenderedPage rendered = render_in_memory(page);
  const std::filesystem::path tables = folder / "tables";
  const std::filesystem::path charts = folder / "charts";
  std::error_code error;
  std::filesystem::create_directories(tables, error);
  if (!error) std::filesystem::create_directories(charts, error);
  if (error) {
    throw std::runtime_error("cannot create the report folder " + folder.string() + ": " + error.message() +
                             "; pass a writable --out folder");
  }
  remove_stale(tables, {".csv", ".json"}, rendered.tables);
  remove_stale(charts, {".svg"}, rendered.charts);
  for (const auto& [name, content] : rendered.tables) detail::write_text_file(tables / name, content);
  for (const auto& [name, content] : rendered.charts) detail::write_text_file(charts / name, content);
  detail::write_text_file(folder / "index.md", rendered.index_md);
  detail::write_text_file(folder / "index.html", rendered.index_html);
}

std::filesystem::path render_page(const Page& page, const std::filesystem::path& out_dir) {
  const std::filesystem::path folder = page_folder(page, out_dir);
  render_page_into(page, folder);
  return folder;
}

}  // namespace k3lab::report
