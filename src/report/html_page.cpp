// Report pages as self-contained HTML (include/k3lab/report/html_page.hpp).
#include "k3lab/report/html_page.hpp"

#include <string>
#include <vector>

#include "k3lab/report/markdown_html.hpp"
#include "k3lab/report/svg.hpp"
#include "output_files.hpp"
#include "page_sections.hpp"
#include "table_cells.hpp"

namespace k3lab::report {

namespace {

// Readable on screen and on paper; wide tables scroll on screen and wrap in print.
constexpr const char* kStyle =
    "body { font-family: Helvetica, Arial, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; "
    "color: #222222; line-height: 1.45; }\n"
    "nav { font-size: 0.9em; }\n"
    "code { font-family: Menlo, Consolas, monospace; font-size: 0.92em; background: #f3f3f3; padding: 0 2px; }\n"
    "pre { background: #f6f6f6; padding: 1em; overflow-x: auto; white-space: pre-wrap; }\n"
    ".banner { border: 2px solid #b00020; color: #b00020; font-weight: bold; padding: 0.5em 1em; }\n"
    ".warning { border-left: 4px solid #e69f00; padding: 0.2em 1em; }\n"
    ".not-frozen { color: #b00020; font-weight: bold; }\n"
    ".frozen { color: #1b5e20; font-weight: bold; }\n"
    "dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }\n"
    "dl.facts dt { font-weight: bold; }\n"
    "dl.facts dd { margin: 0; }\n"
    ".transfer-limit { background: #f7f9fc; border: 1px solid #d0d7e2; padding: 0 1em; }\n"
    ".table-scroll { overflow-x: auto; }\n"
    "table { border-collapse: collapse; margin: 0.5em 0; }\n"
    "th, td { border: 1px solid #cccccc; padding: 3px 8px; text-align: left; vertical-align: top; }\n"
    "td { white-space: pre-wrap; }\n"
    "th { background: #f3f3f3; }\n"
    "td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }\n"
    ".caption, .data-files { font-size: 0.92em; color: #444444; }\n"
    "figure { margin: 1em 0; }\n"
    "img { max-width: 100%; height: auto; display: block; }\n"
    "section { margin-top: 2em; }\n"
    "@media print { body { max-width: none; margin: 0; } .table-scroll { overflow: visible; } "
    "a { color: inherit; } table, figure, .transfer-limit { break-inside: avoid; } }\n";

std::string html_document(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         xml_escape(title) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n" + body +
         "</body>\n</html>\n";
}

std::string html_link(const std::string& target, const std::string& shown) {
  return "<a href=\"" + xml_escape(detail::url_path(target)) + "\">" + xml_escape(shown) + "</a>";
}

// Cells are data (recorded strings, numbers): shown as written, line breaks kept.
std::string cell_html(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find('\n', start);
    out += xml_escape(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    out += "<br>";
    start = end + 1;
  }
}

std::string table_html(const Table& table) {
  detail::check_table(table);
  std::vector<bool> numeric;
  for (std::size_t c = 0; c < table.columns.size(); ++c) numeric.push_back(detail::numeric_column(table, c));
  std::string html = "<div class=\"table-scroll\">\n<table>\n<thead><tr>";
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    html += std::string(numeric[c] ? "<th class=\"num\">" : "<th>") + cell_html(table.columns[c]) + "</th>";
  }
  html += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    html += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      html +=
          std::string(numeric[c] ? "<td class=\"num\">" : "<td>") + cell_html(detail::reading_text(row[c])) + "</td>";
    }
    html += "</tr>\n";
  }
  return html + "</tbody>\n</table>\n</div>\n";
}

std::string html_bullet_list(const std::vector<std::string>& items, const std::string& css_class) {
  std::string html = "<ul class=\"" + css_class + "\">\n";
  if (items.empty()) html += "<li>(nothing stated)</li>\n";
  for (const std::string& item : items) html += "<li>" + inline_markdown_html(item) + "</li>\n";
  return html + "</ul>\n";
}

std::string or_text(const std::string& text, const std::string& when_empty) { return text.empty() ? when_empty : text; }

// "FROZEN" or "NOT FROZEN" in colour, then the statement (without a leading "FROZEN:" of its own).
std::string protocol_html(const Page& page) {
  std::string statement = detail::protocol_statement(page);
  if (!page.frozen) return "<span class=\"not-frozen\">NOT FROZEN</span> — " + inline_markdown_html(statement);
  const std::string prefix = "FROZEN";
  if (statement.rfind(prefix, 0) == 0) {
    const auto rest = statement.find_first_not_of(": ", prefix.size());
    statement = rest == std::string::npos ? std::string() : statement.substr(rest);
  }
  return "<span class=\"frozen\">FROZEN</span> " + inline_markdown_html(statement);
}

std::string header_html(const Page& page) {
  std::string html = "<header>\n<h1>" + xml_escape(detail::page_title(page)) + "</h1>\n";
  if (page.profile == "smoke") html += std::string("<p class=\"banner\">") + xml_escape(kSmokeBanner) + "</p>\n";
  html += "<dl class=\"facts\">\n<dt>Experiment</dt><dd><code>" + xml_escape(page.experiment_id) + "</code></dd>\n";
  html += "<dt>Profile</dt><dd>" +
          (page.profile.empty() ? std::string("(none)") : "<code>" + xml_escape(page.profile) + "</code>") + "</dd>\n";
  html += "<dt>Evidence class</dt><dd>" + xml_escape(or_text(page.evidence_class, "(not stated)")) + "</dd>\n";
  html += "<dt>Protocol</dt><dd>" + protocol_html(page) + "</dd>\n";
  html += "<dt>Status</dt><dd>" + inline_markdown_html(or_text(page.status, "(not stated)")) + "</dd>\n";
  if (!page.run_dir.empty()) html += "<dt>Run</dt><dd><code>" + xml_escape(page.run_dir) + "</code></dd>\n";
  html += "</dl>\n";
  if (!page.run_note.empty()) html += markdown_html(page.run_note);
  for (const std::string& label : page.labels) {
    html += "<p class=\"warning\"><strong>WARNING:</strong> " + inline_markdown_html(label) + "</p>\n";
  }
  html += "<section id=\"transfer-limit\" class=\"transfer-limit\">\n<h2>Transfer limit</h2>\n<h3>Can say</h3>\n" +
          html_bullet_list(page.can_say, "can-say") + "<h3>Cannot say</h3>\n" +
          html_bullet_list(page.cannot_say, "cannot-say") + "</section>\n</header>\n";
  return html;
}

std::string block_html(const Block& block) {
  switch (block.kind) {
    case Block::Kind::Markdown:
      return markdown_html(block.markdown);
    case Block::Kind::Table: {
      const Table& table = block.table;
      std::string html = "<div class=\"table-block\" id=\"table-" + xml_escape(table.id) + "\">\n";
      if (!table.title.empty()) html += "<h3>" + inline_markdown_html(table.title) + "</h3>\n";
      html += table_html(table);
      if (!table.caption.empty()) html += "<div class=\"caption\">\n" + markdown_html(table.caption) + "</div>\n";
      html +=
          "<p class=\"data-files\">Data: " + html_link("tables/" + table.id + ".csv", "tables/" + table.id + ".csv") +
          " · " + html_link("tables/" + table.id + ".json", "tables/" + table.id + ".json") + "</p>\n</div>\n";
      return html;
    }
    case Block::Kind::Chart: {
      const Chart& chart = block.chart;
      std::string html = "<figure id=\"chart-" + xml_escape(chart.id) + "\">\n";
      if (!chart.title.empty()) html += "<h3>" + inline_markdown_html(chart.title) + "</h3>\n";
      html += "<img src=\"" + xml_escape(detail::url_path("charts/" + chart.id + ".svg")) + "\" alt=\"" +
              xml_escape(or_text(chart.title, chart.id)) + "\">\n";
      if (!chart.caption.empty())
        html += "<figcaption class=\"caption\">\n" + markdown_html(chart.caption) + "</figcaption>\n";
      return html + "</figure>\n";
    }
  }
  return "";
}

// A section of blocks under its heading; nothing when there are no blocks.
std::string blocks_section_html(const std::string& id, const std::string& heading, const std::vector<Block>& blocks) {
  if (blocks.empty()) return "";
  std::string html = "<section id=\"" + id + "\">\n<h2>" + heading + "</h2>\n";
  for (const Block& block : blocks) html += block_html(block);
  return html + "</section>\n";
}

std::string log_html(const std::string& id, const std::string& heading, const std::vector<LogEntry>& entries) {
  std::string html = "<section id=\"" + id + "\">\n<h2>" + heading + "</h2>\n";
  if (entries.empty()) return html + "<p>none</p>\n</section>\n";
  return html + "<p>" + xml_escape(detail::log_summary(entries)) + "</p>\n" +
         table_html(detail::log_table(heading, entries)) + "</section>\n";
}

}  // namespace

std::string page_html(const Page& page) {
  std::string body = "<nav>" + html_link(page.report_root + "/index.html", "k3lab report") + " · " + html_link("index.md", "index.md") +
                     "</nav>\n" + header_html(page) + "<main>\n<section id=\"results\">\n<h2>Results</h2>\n";
  if (page.blocks.empty()) body += "<p>none</p>\n";
  for (const Block& block : page.blocks) body += block_html(block);
  body += "</section>\n" + log_html("failure-log", "Failure log", page.failures) +
          log_html("excluded-data", "Excluded data", page.excluded) + blocks_section_html("runs", "Runs", page.runs) +
          blocks_section_html("reproduce", "Reproduce", page.reproduce) + "<section id=\"provenance\">\n<h2>Provenance</h2>\n";
  body += detail::has_provenance(page.provenance) ? table_html(detail::provenance_table(page.provenance))
                                                  : "<p>none recorded (no manifest was available to this page)</p>\n";
  body += "</section>\n</main>\n";
  return html_document(detail::page_title(page) + " — k3lab", body);
}

std::string note_html(const std::string& title, const std::string& text, const std::string& index_link) {
  return html_document(title + " — k3lab", "<nav>" + html_link(index_link, "k3lab report") + "</nav>\n<h1>" +
                                               xml_escape(title) + "</h1>\n<pre>" + xml_escape(text) + "</pre>\n");
}

}  // namespace k3lab::report
