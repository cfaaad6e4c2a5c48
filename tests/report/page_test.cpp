// Report pages and the index: layout, header order, byte-identical re-renders, stale files, errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/temp_dir.hpp"
#include "k3lab/report/page.hpp"
#include "xml_check.hpp"

namespace k3lab::report {
namespace {

namespace fs = std::filesystem;

class PageTest : public ::testing::Test {
 protected:
  k3lab::testing::TempDir dir_{"k3lab-report-test"};
  fs::path root_ = dir_.path();
};

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "missing " << path;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Every regular file under `dir`, keyed by its relative path.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files[fs::relative(entry.path(), dir).string()] = read(entry.path());
  }
  return files;
}

Page sample_page(bool frozen) {
  Page page;
  page.experiment_id = "attn-res";
  page.title = "Ordinary residuals vs Attention Residuals";
  page.evidence_class = "proxy ablation";
  page.profile = "smoke";
  page.run_dir = "attn-res/20260101-000000-abcd";
  page.frozen = frozen;
  page.frozen_detail = frozen ? "FROZEN: protocol sha256 ab12cd frozen at 2026-01-01T00:00:00Z rev 1234567" : "";
  page.labels = {"simulated endpoint: not evidence about Kimi K3"};
  page.can_say = {"whether depth selection helps this small model"};
  page.cannot_say = {"anything about K3-scale improvement"};
  page.status = "complete: 15 of 15 units";
  page.add_text("Intro paragraph with **bold**.");
  Table table;
  table.id = "per-seed";
  table.title = "Per-seed loss";
  table.columns = {"seed", "baseline", "attn-res"};
  table.rows.push_back({Cell(1), Cell(3.1234), Cell(3.0987)});
  table.rows.push_back({Cell(2), Cell(3.2), Cell("n/a, crashed")});
  table.caption = "Lower is better.";
  page.add_table(table);
  Chart chart;
  chart.id = "loss-curve";
  chart.title = "Loss";
  chart.series.push_back({"baseline", {1, 2, 3}, {3.5, 3.2, 3.1}, {}, {}});
  page.add_chart(chart);
  page.add_text("Closing remark.");
  page.failures.push_back({"seed=3/arm=attn-res", "failure", "oom", "CUDA out of memory at step 120"});
  page.excluded.push_back({"seed=4/arm=baseline", "invalid", "nan-loss", "loss was NaN at step 10"});
  page.excluded.push_back({"seed=5/arm=baseline", "invalid", "nan-loss", "loss was NaN at step 12"});
  page.provenance = {{"git", {{"revision", "1234567"}, {"dirty", false}}}, {"command", "k3lab run attn-res | tee"}};
  return page;
}

TEST_F(PageTest, WritesTheExpectedFiles) {
  const fs::path folder = render_page(sample_page(true), root_);
  EXPECT_EQ(folder, root_ / "attn-res-smoke");
  const auto files = snapshot(folder);
  std::vector<std::string> names;
  for (const auto& [name, content] : files) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"charts/loss-curve.svg", "index.html", "index.md",
                                             "tables/per-seed.csv", "tables/per-seed.json"}));
  EXPECT_EQ(files.at("tables/per-seed.csv"), "seed,baseline,attn-res\n1,3.123,3.099\n2,3.2,\"n/a, crashed\"\n");
  const auto json = nlohmann::json::parse(files.at("tables/per-seed.json"));
  EXPECT_DOUBLE_EQ(json[0]["baseline"].get<double>(), 3.1234);
  EXPECT_EQ(testing::xml_error(files.at("charts/loss-curve.svg")), "");
}

TEST_F(PageTest, IndexMdHasTheHeaderThenBlocksThenLogsInOrder) {
  const std::string md = read(render_page(sample_page(true), root_) / "index.md");
  EXPECT_EQ(md.rfind("# Ordinary residuals vs Attention Residuals\n", 0), 0u) << md;
  const std::vector<std::string> in_order = {
      "**Evidence class:** proxy ablation",
      "FROZEN: protocol sha256 ab12cd",
      "**WARNING:** simulated endpoint: not evidence about Kimi K3",
      "**Status:** complete: 15 of 15 units",
      "**Can say**\n\n- whether depth selection helps this small model",
      "**Cannot say**\n\n- anything about K3-scale improvement",
      "Intro paragraph with **bold**.",
      "### Per-seed loss",
      "| seed | baseline | attn-res |",
      "| 2 | 3.2 | n/a, crashed |",
      "Lower is better.",
      "[tables/per-seed.csv](tables/per-seed.csv)",
      "[tables/per-seed.json](tables/per-seed.json)",
      "![Loss](charts/loss-curve.svg)",
      "Closing remark.",
      "## Failure log",
      "| seed=3/arm=attn-res | failure | oom | CUDA out of memory at step 120 |",
      "## Excluded data",
      "2 entries; by reason: nan-loss (2).",
      "## Provenance",
      "| command | k3lab run attn-res \\| tee |",
      "| git.dirty | false |",
      "| git.revision | 1234567 |",
  };
  std::size_t at = 0;
  for (const std::string& piece : in_order) {
    const std::size_t found = md.find(piece, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << piece << "\n---\n" << md;
    at = found + piece.size();
  }
  EXPECT_EQ(md.find("NOT FROZEN"), std::string::npos);
}

TEST_F(PageTest, UnfrozenPagesSaySoAndEmptyLogsSayNone) {
  Page page = sample_page(false);
  page.failures.clear();
  page.excluded.clear();
  page.provenance = nullptr;
  const std::string md = read(render_page(page, root_) / "index.md");
  EXPECT_NE(md.find("**NOT FROZEN**"), std::string::npos);
  EXPECT_NE(md.find("## Failure log\n\nnone\n"), std::string::npos) << md;
  EXPECT_NE(md.find("## Excluded data\n\nnone\n"), std::string::npos);
  EXPECT_NE(md.find("## Provenance\n\nnone recorded"), std::string::npos);

  page.frozen_detail = "NOT FROZEN: this run used --unfrozen";
  const std::string with_detail = read(render_page(page, root_) / "index.md");
  EXPECT_NE(with_detail.find("> **NOT FROZEN** — this run used --unfrozen\n"), std::string::npos) << with_detail;
}

TEST_F(PageTest, TwoRendersAreByteIdentical) {
  render_page(sample_page(true), root_ / "a");
  render_page(sample_page(true), root_ / "b");
  const auto a = snapshot(root_ / "a");
  EXPECT_EQ(a, snapshot(root_ / "b"));
  render_page(sample_page(true), root_ / "a");  // re-render in place
  EXPECT_EQ(a, snapshot(root_ / "a"));
  EXPECT_EQ(a.size(), 5u);
}

TEST_F(PageTest, StaleOutputsFromAnEarlierRenderAreRemoved) {
  Page page = sample_page(true);
  render_page(page, root_);
  page.blocks.erase(page.blocks.begin() + 1, page.blocks.begin() + 3);  // drop the table and the chart
  const fs::path folder = render_page(page, root_);
  EXPECT_FALSE(fs::exists(folder / "charts/loss-curve.svg"));
  EXPECT_FALSE(fs::exists(folder / "tables/per-seed.csv"));
  EXPECT_FALSE(fs::exists(folder / "tables/per-seed.json"));
  EXPECT_TRUE(fs::exists(folder / "index.md"));
}

TEST_F(PageTest, BadPagesFailBeforeWritingAnything) {
  Page page = sample_page(true);
  page.experiment_id = "../escape";
  EXPECT_THROW(render_page(page, root_), std::invalid_argument);
  page = sample_page(true);
  page.add_chart(page.blocks[2].chart);  // same chart id twice
  EXPECT_THROW(render_page(page, root_), std::invalid_argument);
  page = sample_page(true);
  page.blocks[1].table.rows[0].pop_back();  // ragged table
  EXPECT_THROW(render_page(page, root_), std::invalid_argument);
  page = sample_page(true);
  page.blocks[1].table.id = "";
  EXPECT_THROW(render_page(page, root_), std::invalid_argument);
  EXPECT_TRUE(fs::is_empty(root_));
}

TEST_F(PageTest, InvalidUtf8InRecordedTextDoesNotStopTheRender) {
  Page page = sample_page(true);
  page.blocks[1].table.rows[1][2] = Cell("model said \xFF\xFE");
  page.provenance["host"] = {{"name", "bad\xC3"}};
  const fs::path folder = render_page(page, root_);
  const std::string json = read(folder / "tables/per-seed.json");
  EXPECT_NE(json.find("model said \xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos) << json;
  EXPECT_NO_THROW(nlohmann::json::parse(json));
}

TEST_F(PageTest, EmptyProfileUsesTheBareId) {
  Page page = sample_page(true);
  page.profile = "";
  EXPECT_EQ(render_page(page, root_), root_ / "attn-res");
}

TEST_F(PageTest, IndexListsEveryPageWithItsCharts) {
  Page frozen = sample_page(true);
  Page unfrozen = sample_page(false);
  unfrozen.experiment_id = "memory-pool";
  unfrozen.title = "Memory pool <admission> & more";
  unfrozen.evidence_class = "systems simulation";
  unfrozen.blocks.clear();
  render_page(frozen, root_);
  render_page(unfrozen, root_);
  const std::vector<IndexEntry> entries = {
      {"attn-res", frozen.title, frozen.evidence_class, "smoke", frozen.status, true, "attn-res-smoke", {}},
      {"memory-pool", unfrozen.title, unfrozen.evidence_class, "smoke", unfrozen.status, false, "memory-pool-smoke", {}},
  };
  render_index(entries, root_);
  const std::string html = read(root_ / "index.html");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<a href=\"attn-res-smoke/index.html\">"), std::string::npos) << html;
  EXPECT_EQ(html.find("index.md"), std::string::npos) << "the index links HTML pages only";
  EXPECT_NE(html.find("<img src=\"attn-res-smoke/charts/loss-curve.svg\""), std::string::npos);
  EXPECT_NE(html.find("Memory pool &lt;admission&gt; &amp; more"), std::string::npos);
  EXPECT_NE(html.find(">NOT FROZEN<"), std::string::npos);
  EXPECT_NE(html.find(">frozen<"), std::string::npos);
  EXPECT_NE(html.find("systems simulation"), std::string::npos);
  EXPECT_NE(html.find("No charts."), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained and static

  const std::string readme = read(root_ / "README.md");
  EXPECT_NE(readme.find("[attn-res-smoke/index.md](attn-res-smoke/index.md)"), std::string::npos) << readme;
  EXPECT_NE(readme.find("**NOT FROZEN**"), std::string::npos);
  EXPECT_NE(readme.find("![attn-res-smoke/charts/loss-curve.svg](attn-res-smoke/charts/loss-curve.svg)"),
            std::string::npos);

  render_index(entries, root_);
  EXPECT_EQ(read(root_ / "index.html"), html);
  EXPECT_EQ(read(root_ / "README.md"), readme);
}

TEST_F(PageTest, IndexRejectsMissingOrEscapingPageFolders) {
  EXPECT_THROW(render_index({{"x", "X", "c", "smoke", "s", true, "x-smoke", {}}}, root_), std::invalid_argument);
  EXPECT_THROW(render_index({{"x", "X", "c", "smoke", "s", true, "../x", {}}}, root_), std::invalid_argument);
  render_index({}, root_);
  EXPECT_NE(read(root_ / "index.html").find("No experiment pages were rendered."), std::string::npos);
}

}  // namespace
}  // namespace k3lab::report
