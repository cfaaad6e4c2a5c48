// The HTML rendering of a report page: the same facts as index.md, in the same order, escaped, with
// links only to the page's own files, and deterministic bytes; a damaged run dir's note gets an HTML page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir.hpp"
#include "k3lab/report/html_page.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::report {
namespace {

namespace fs = std::filesystem;

std::string read_whole_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Page html_sample_page() {
  Page page;
  page.experiment_id = "memory-pool";
  page.title = "Pools <admission> & more";
  page.evidence_class = "systems-simulation";
  page.profile = "smoke";
  page.run_dir = "memory-pool/20260101-000000-abcd";
  page.frozen = true;
  page.frozen_detail = "FROZEN: protocol sha256 ab12cd, frozen at 2026-01-01T00:00:00Z";
  page.labels = {"systems simulation: simulated memory policies"};
  page.can_say = {"Only that the pipeline runs (`27` units).", "A second claim."};
  page.cannot_say = {"Anything about the hypothesis."};
  page.status = "complete: 27 of 27 units";
  page.add_text("### Model\n\nSizes are **derived**.\n\n- **unified**: one arena");
  Table table;
  table.id = "decision";
  table.title = "Decision";
  table.columns = {"mix", "pairs", "admitted"};
  table.rows.push_back({Cell("steady-short"), Cell(2), Cell(18040.2)});
  table.rows.push_back({Cell("bursty <mixed>"), Cell(1234567), Cell()});
  table.caption = "Student-t 95% interval; **no verdict** on smoke.";
  page.add_table(table);
  Chart chart;
  chart.id = "admitted";
  chart.title = "Admitted requests";
  chart.caption = "unified and fixed-split overlap.";
  chart.series.push_back({"unified", {1, 2}, {3, 4}, {}, {}});
  page.add_chart(chart);
  page.failures.push_back({"mix=a/seed=1", "failure", "oom", "detail with <tag> & \"quotes\""});
  page.provenance = {{"git", {{"revision", "1234567"}}}, {"command", "k3lab run memory-pool"}};
  return page;
}

TEST(HtmlPage, StatesTheHeaderThenTheBlocksThenLogsAndProvenanceInOrder) {
  const std::string html = page_html(html_sample_page());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">", 0), 0u) << html;
  const std::vector<std::string> in_order = {
      "<title>Pools &lt;admission&gt; &amp; more — k3lab</title>",
      "<a href=\"../index.html\">k3lab report</a>",
      "<h1>Pools &lt;admission&gt; &amp; more</h1>",
      "<p class=\"banner\">SMOKE PROFILE: toy sizes; not evidence about the hypothesis</p>",
      "<dt>Evidence class</dt><dd>systems-simulation</dd>",
      "<span class=\"frozen\">FROZEN</span> protocol sha256 ab12cd, frozen at 2026-01-01T00:00:00Z",
      "<dt>Status</dt><dd>complete: 27 of 27 units</dd>",
      "<code>memory-pool/20260101-000000-abcd</code>",
      "<strong>WARNING:</strong> systems simulation: simulated memory policies",
      "<section id=\"transfer-limit\"",
      "<ul class=\"can-say\">\n<li>Only that the pipeline runs (<code>27</code> units).</li>\n<li>A second claim.</li>",
      "<ul class=\"cannot-say\">\n<li>Anything about the hypothesis.</li>",
      "<h2>Results</h2>",
      "<h3>Model</h3>\n<p>Sizes are <strong>derived</strong>.</p>\n<ul>\n<li><strong>unified</strong>: one arena</li>",
      "<h3>Decision</h3>",
      "<th>mix</th><th class=\"num\">pairs</th><th class=\"num\">admitted</th>",
      "<td>steady-short</td><td class=\"num\">2</td><td class=\"num\">18,040</td>",
      "<td>bursty &lt;mixed&gt;</td><td class=\"num\">1,234,567</td><td class=\"num\">–</td>",
      "Student-t 95% interval; <strong>no verdict</strong> on smoke.",
      "<a href=\"tables/decision.csv\">tables/decision.csv</a> · <a href=\"tables/decision.json\">",
      "<h3>Admitted requests</h3>\n<img src=\"charts/admitted.svg\" alt=\"Admitted requests\">",
      "unified and fixed-split overlap.",
      "<h2>Failure log</h2>\n<p>1 entry; by reason: oom (1).</p>",
      "<td>detail with &lt;tag&gt; &amp; &quot;quotes&quot;</td>",
      "<h2>Excluded data</h2>\n<p>none</p>",
      "<h2>Provenance</h2>",
      "<td>command</td><td>k3lab run memory-pool</td>",
      "<td>git.revision</td><td>1234567</td>",
      "</html>\n",
  };
  std::size_t at = 0;
  for (const std::string& piece : in_order) {
    const std::size_t found = html.find(piece, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << piece << "\n---\n" << html;
    at = found + piece.size();
  }
  EXPECT_EQ(html.find("NOT FROZEN"), std::string::npos);
}

TEST(HtmlPage, IsSelfContainedAndLinksOnlyItsOwnFiles) {
  const std::string html = page_html(html_sample_page());
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  const std::regex attribute(R"re((?:href|src)="([^"]*)")re");
  std::vector<std::string> targets;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), attribute); it != std::sregex_iterator(); ++it) {
    targets.push_back((*it)[1].str());
  }
  EXPECT_EQ(targets, (std::vector<std::string>{"../index.html", "index.md", "tables/decision.csv",
                                               "tables/decision.json", "charts/admitted.svg"}));
}

TEST(HtmlPage, UnfrozenPagesAndEmptyFieldsSaySo) {
  Page page = html_sample_page();
  page.frozen = false;
  page.frozen_detail = "NOT FROZEN: this run used --set";
  page.profile = "full";
  page.can_say.clear();
  page.blocks.clear();
  page.failures.clear();
  page.provenance = nullptr;
  const std::string html = page_html(page);
  EXPECT_NE(html.find("<span class=\"not-frozen\">NOT FROZEN</span> — this run used --set"), std::string::npos) << html;
  EXPECT_EQ(html.find("class=\"banner\""), std::string::npos) << "only smoke pages carry the smoke banner";
  EXPECT_NE(html.find("<ul class=\"can-say\">\n<li>(nothing stated)</li>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Results</h2>\n<p>none</p>"), std::string::npos);
  EXPECT_NE(html.find("<h2>Failure log</h2>\n<p>none</p>"), std::string::npos);
  EXPECT_NE(html.find("none recorded (no manifest was available to this page)"), std::string::npos);
}

TEST(HtmlPage, RenderPageWritesItBesideTheMarkdownWithEqualBytesEachTime) {
  const k3lab::testing::TempDir dir("k3lab-html-page");
  const fs::path folder = render_page(html_sample_page(), dir / "a");
  render_page(html_sample_page(), dir / "b");
  const std::string html = read_whole_file(folder / "index.html");
  EXPECT_EQ(html, page_html(html_sample_page()));
  EXPECT_EQ(html, read_whole_file(dir / "b" / "memory-pool-smoke" / "index.html"));
  // The same cells as the Markdown page: every number as the Markdown shows it.
  const std::string md = read_whole_file(folder / "index.md");
  for (const char* cell : {"18,040", "1,234,567", "steady-short"}) {
    EXPECT_NE(md.find(std::string("| ") + cell + " |"), std::string::npos) << cell;
    EXPECT_NE(html.find(std::string(">") + cell + "</td>"), std::string::npos) << cell;
  }
}

TEST(HtmlPage, TheIndexGivesADamagedRunDirsNoteAnHtmlPage) {
  const k3lab::testing::TempDir dir("k3lab-html-note");
  dir.write("damaged/memory-pool/run-1/index.md",
            "# memory-pool: a run dir that could not be rendered\n\n<bad> & co\n");
  render_index({{"memory-pool", "", "", "", "DAMAGED: bad ledger", false, "damaged/memory-pool/run-1", {}}},
               dir.path());
  const std::string index = read_whole_file(dir / "index.html");
  EXPECT_NE(index.find("href=\"damaged/memory-pool/run-1/index.html\""), std::string::npos) << index;
  const std::string note = read_whole_file(dir / "damaged/memory-pool/run-1/index.html");
  EXPECT_NE(note.find("<a href=\"../../../index.html\">k3lab report</a>"), std::string::npos) << note;
  EXPECT_NE(note.find("<pre># memory-pool: a run dir that could not be rendered\n\n&lt;bad&gt; &amp; co\n</pre>"),
            std::string::npos)
      << note;
  EXPECT_EQ(note, note_html("memory-pool: DAMAGED: bad ledger",
                            read_whole_file(dir / "damaged/memory-pool/run-1/index.md"), "../../../index.html"));
}

}  // namespace
}  // namespace k3lab::report
