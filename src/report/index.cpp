// The report root: index.html (a self-contained page for a browser) and README.md, both listing every
// experiment page with its evidence class, profile, status, frozen state and charts.
#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "k3lab/report/html_page.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/report/svg.hpp"
#include "output_files.hpp"

namespace k3lab::report {

namespace {

struct IndexedPage {
  const IndexEntry* entry = nullptr;
  std::vector<std::string> charts;  // paths relative to the report root, sorted
};

void check_page_dir(const IndexEntry& entry, const std::filesystem::path& out_dir) {
  const std::filesystem::path dir(entry.page_dir);
  bool ok = !entry.page_dir.empty() && dir.is_relative();
  for (const auto& part : dir) ok = ok && part != "..";
  if (!ok) {
    throw std::invalid_argument("index entry '" + entry.experiment_id + "': page_dir '" + entry.page_dir +
                                "' must be a relative path inside the report folder (no '..')");
  }
  if (!std::filesystem::is_directory(out_dir / dir)) {
    throw std::invalid_argument("index entry '" + entry.experiment_id + "': page folder " + (out_dir / dir).string() +
                                " does not exist; render the page (render_page) before the index");
  }
}

std::vector<std::string> charts_in(const std::filesystem::path& out_dir, const std::string& page_dir) {
  std::vector<std::string> charts;
  const std::filesystem::path folder = out_dir / page_dir / "charts";
  if (!std::filesystem::is_directory(folder)) return charts;
  for (const auto& file : std::filesystem::directory_iterator(folder)) {
    if (file.is_regular_file() && file.path().extension() == ".svg") {
      charts.push_back(page_dir + "/charts/" + file.path().filename().string());
    }
  }
  std::sort(charts.begin(), charts.end());  // directory order is not deterministic
  return charts;
}

std::string frozen_text(bool frozen) { return frozen ? "frozen" : "NOT FROZEN"; }

std::string or_dash(const std::string& text) { return text.empty() ? "–" : text; }

std::string html_page(const std::vector<IndexedPage>& pages) {
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>k3lab report</title>\n<style>\n"
      "body { font-family: Helvetica, Arial, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; "
      "color: #222222; line-height: 1.45; }\n"
      "table { border-collapse: collapse; margin: 1em 0; }\n"
      "th, td { border: 1px solid #cccccc; padding: 4px 10px; text-align: left; vertical-align: top; }\n"
      "th { background: #f3f3f3; }\n"
      ".not-frozen { color: #b00020; font-weight: bold; }\n"
      ".frozen { color: #1b5e20; }\n"
      "section { border-top: 1px solid #dddddd; margin-top: 2em; }\n"
      "img { max-width: 100%; height: auto; display: block; margin: 1em 0; }\n"
      "</style>\n</head>\n<body>\n<h1>k3lab report</h1>\n"
      "<p>Every table and chart here was regenerated from run ledgers and manifests only. Each page states its "
      "evidence class, whether its protocol was frozen, and what its result can and cannot say.</p>\n"
      "<table>\n<thead><tr><th>Experiment</th><th>Evidence class</th><th>Profile</th><th>Status</th>"
      "<th>Protocol</th><th>Page</th></tr></thead>\n<tbody>\n";
  if (pages.empty()) html += "<tr><td colspan=\"6\">No experiment pages were rendered.</td></tr>\n";
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const IndexEntry& e = *pages[i].entry;
    const std::string title = e.title.empty() ? e.experiment_id : e.title;
    html += "<tr><td><a href=\"#page-" + std::to_string(i + 1) + "\">" + xml_escape(title) + "</a><br><code>" +
            xml_escape(e.experiment_id) + "</code></td><td>" + xml_escape(or_dash(e.evidence_class)) + "</td><td>" +
            xml_escape(or_dash(e.profile)) + "</td><td>" + xml_escape(or_dash(e.status)) + "</td><td class=\"" +
            (e.frozen ? "frozen" : "not-frozen") + "\">" + frozen_text(e.frozen) + "</td><td><a href=\"" +
            xml_escape(detail::url_path(e.page_dir + "/index.html")) + "\">" +
            xml_escape(e.page_dir + "/index.html") + "</a></td></tr>\n";
  }
  html += "</tbody>\n</table>\n";
  for (std::size_t i = 0; i < pages.size(); ++i) {
    const IndexEntry& e = *pages[i].entry;
    const std::string title = e.title.empty() ? e.experiment_id : e.title;
    html += "<section id=\"page-" + std::to_string(i + 1) + "\">\n<h2>" + xml_escape(title) + "</h2>\n<p><code>" +
            xml_escape(e.experiment_id) + "</code> · profile " + xml_escape(or_dash(e.profile)) + " · " +
            xml_escape(or_dash(e.evidence_class)) + " · <span class=\"" + (e.frozen ? "frozen" : "not-frozen") +
            "\">" + frozen_text(e.frozen) + "</span> · " + xml_escape(or_dash(e.status)) + " · <a href=\"" +
            xml_escape(detail::url_path(e.page_dir + "/index.html")) + "\">full page</a></p>\n";
    for (const std::string& label : e.labels) {
      html += "<p class=\"not-frozen\">WARNING: " + xml_escape(label) + "</p>\n";
    }
    if (pages[i].charts.empty()) html += "<p>No charts.</p>\n";
    for (const std::string& chart : pages[i].charts) {
      html += "<img src=\"" + xml_escape(detail::url_path(chart)) + "\" alt=\"" + xml_escape(chart) + "\">\n";
    }
    html += "</section>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

std::string readme(const std::vector<IndexedPage>& pages) {
  std::string md = "# k3lab report\n\nEvery table and chart here was regenerated from run ledgers and manifests "
                   "only. Open `index.html` in a browser for the same list with charts inline.\n\n";
  Table table;
  table.id = "experiments";
  table.columns = {"Experiment", "Evidence class", "Profile", "Status", "Protocol", "Page"};
  for (const IndexedPage& page : pages) {
    const IndexEntry& e = *page.entry;
    const std::string link = e.page_dir + "/index.md";
    table.rows.push_back({Cell((e.title.empty() ? e.experiment_id : e.title) + " (`" + e.experiment_id + "`)"),
                          Cell(or_dash(e.evidence_class)), Cell(or_dash(e.profile)), Cell(or_dash(e.status)),
                          Cell(e.frozen ? std::string("frozen") : std::string("**NOT FROZEN**")),
                          Cell("[" + link + "](" + detail::url_path(link) + ")")});
  }
  if (pages.empty()) return md + "No experiment pages were rendered.\n";
  md += table_markdown(table) + "\n";
  for (const IndexedPage& page : pages) {
    const IndexEntry& e = *page.entry;
    md += "## " + (e.title.empty() ? e.experiment_id : e.title) + " (" + or_dash(e.profile) + ")\n\n";
    if (page.charts.empty()) md += "No charts.\n\n";
    for (const std::string& chart : page.charts) md += "![" + chart + "](" + detail::url_path(chart) + ")\n\n";
  }
  return md;
}

// The index links HTML pages only; a folder that holds only a Markdown note (a damaged run dir's) gets
// that note shown as written in an index.html beside it.
void add_html_note(const IndexEntry& entry, const std::filesystem::path& out_dir) {
  const std::filesystem::path folder = out_dir / entry.page_dir;
  if (std::filesystem::exists(folder / "index.html") || !std::filesystem::exists(folder / "index.md")) return;
  std::string up;
  for (const auto& part : std::filesystem::path(entry.page_dir).lexically_normal()) {
    if (!part.empty() && part != ".") up += "../";
  }
  detail::write_text_file(folder / "index.html", note_html(entry.experiment_id + ": " + or_dash(entry.status),
                                                           detail::read_text_file(folder / "index.md"),
                                                           up + "index.html"));
}

}  // namespace

void render_index(const std::vector<IndexEntry>& entries, const std::filesystem::path& out_dir) {
  std::vector<IndexedPage> pages;
  for (const IndexEntry& entry : entries) {
    check_page_dir(entry, out_dir);
    add_html_note(entry, out_dir);
    pages.push_back({&entry, charts_in(out_dir, entry.page_dir)});
  }
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) {
    throw std::runtime_error("cannot create the report folder " + out_dir.string() + ": " + error.message());
  }
  detail::write_text_file(out_dir / "index.html", html_page(pages));
  detail::write_text_file(out_dir / "README.md", readme(pages));
}

}  // namespace k3lab::report
