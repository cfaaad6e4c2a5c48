// The HTML report in a real browser (issue 16): headless Chromium opens the index and every page of a
// report rendered from the committed smoke fixtures straight from disk, and the test checks what a
// reader would meet: no console errors, no missing image or link target, index links that lead to HTML
// pages, each page's can-say block and tables present in the loaded DOM (counted against the same
// page's Markdown, an independent rendering), and screenshots that are not blank.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "browser_support.hpp"
#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "smoke/smoke_support.hpp"

namespace k3lab::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kShotWidth = 1280;
constexpr int kShotHeight = 1600;

// Loads every page in an iframe and, once all have loaded (images included), writes one line per page
// into <pre id="result">: "PAGE <path> images <loaded>/<total> tables <n> can-say <n> transfer <0|1>".
// Needs --allow-file-access-from-files (file:// frames are otherwise opaque to the parent).
std::string harness_html(const std::vector<std::string>& pages) {
  std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"></head><body>\n";
  for (const std::string& page : pages) html += "<iframe width=\"800\" height=\"200\" src=\"" + page + "\"></iframe>\n";
  html += R"(<pre id="result"></pre>
<script>
window.addEventListener('load', () => {
  const lines = [];
  for (const frame of document.querySelectorAll('iframe')) {
    const doc = frame.contentDocument;
    if (!doc) { lines.push('UNREADABLE ' + frame.getAttribute('src')); continue; }
    const images = Array.from(doc.images);
    const loaded = images.filter((img) => img.complete && img.naturalWidth > 0).length;
    const transfer = doc.getElementById('transfer-limit');
    const canSay = doc.querySelectorAll('#transfer-limit ul.can-say > li').length;
    lines.push('PAGE ' + frame.getAttribute('src') + ' images ' + loaded + '/' + images.length + ' tables ' +
               doc.querySelectorAll('table').length + ' can-say ' + canSay + ' transfer ' +
               (transfer && transfer.textContent.includes('Can say') && transfer.textContent.includes('Cannot say') ? 1 : 0));
  }
  document.getElementById('result').textContent = lines.join('\n');
});
</script>
</body></html>
)";
  return html;
}

struct PageInBrowser {
  int images_loaded = -1;
  int images = -1;
  int tables = -1;
  int can_say = -1;
  int transfer = -1;
};

// The harness's result lines, keyed by page path.
std::map<std::string, PageInBrowser> parse_harness_dom(const std::string& dom) {
  static const std::regex line(R"(PAGE (\S+) images (\d+)/(\d+) tables (\d+) can-say (\d+) transfer (\d))");
  std::map<std::string, PageInBrowser> pages;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), line); it != std::sregex_iterator(); ++it) {
    const auto& m = *it;
    pages[m[1].str()] = {std::stoi(m[2].str()), std::stoi(m[3].str()), std::stoi(m[4].str()), std::stoi(m[5].str()),
                         std::stoi(m[6].str())};
  }
  return pages;
}

struct MarkdownCounts {
  int tables = 0;
  int can_say = 0;
};

// The same page's Markdown: its tables (one "|---" delimiter row each) and its can-say bullets.
MarkdownCounts count_markdown(const std::string& markdown) {
  static const std::regex delimiter(R"(^\|(?:-{3}:?\|)+$)");
  MarkdownCounts counts;
  std::stringstream in(markdown);
  std::string line;
  enum { Before, CanSay, After } where = Before;
  while (std::getline(in, line)) {
    if (std::regex_match(line, delimiter)) ++counts.tables;
    if (line == "**Can say**") where = CanSay;
    if (line == "**Cannot say**") where = After;
    if (where == CanSay && line.rfind("- ", 0) == 0) ++counts.can_say;
  }
  return counts;
}

ProcessResult dump_harness(const fs::path& chromium, const fs::path& root, const std::vector<std::string>& pages) {
  const fs::path harness = root / "browser-harness.html";
  {
    std::ofstream out(harness, std::ios::binary);
    out << harness_html(pages);
  }
  return run_headless(chromium, root / ".chromium-harness", {"--allow-file-access-from-files", "--dump-dom"},
                      file_url(harness));
}

// Screenshots of `pages` (paths under `root`) into `shots` as <page folder>.png, keyed by the PNG's path.
// One browser at a time: on two cores, four at once took four times as long as one (start-up dominates).
std::map<std::string, ProcessResult> take_screenshots(const fs::path& chromium, const fs::path& root,
                                                      const std::vector<std::string>& pages, const fs::path& shots) {
  std::map<std::string, ProcessResult> results;
  for (const std::string& page : pages) {
    const fs::path path(page);
    const fs::path png =
        shots / ((path.has_parent_path() ? path.parent_path().string() : path.stem().string()) + ".png");
    results.emplace(png.string(),
                    run_headless(chromium, root / ".chromium-shots",
                                 {"--hide-scrollbars",
                                  "--window-size=" + std::to_string(kShotWidth) + "," + std::to_string(kShotHeight),
                                  "--screenshot=" + png.string()},
                                 file_url(root / path)));
  }
  return results;
}

// A screenshot shows the page when it has the window's size and holds far more detail than a render of
// an empty page of that size (PNG compresses a uniform image to almost nothing).
std::string screenshot_problem(const fs::path& png, const fs::path& blank_png) {
  const auto size = png_size(png);
  if (!size) return png.string() + " is missing or not a PNG";
  if (size->width != static_cast<unsigned>(kShotWidth) || size->height != static_cast<unsigned>(kShotHeight)) {
    return png.string() + " is " + std::to_string(size->width) + "x" + std::to_string(size->height);
  }
  const auto bytes = fs::file_size(png);
  const auto blank = fs::file_size(blank_png);
  if (bytes < 3 * blank) {
    return png.string() + " looks blank: " + std::to_string(bytes) + " bytes against " + std::to_string(blank) +
           " for an empty page";
  }
  return "";
}

fs::path screenshot_dir() {
  const fs::path dir = K3LAB_BROWSER_SCREENSHOTS;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

class ReportInBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto found = find_chromium();
    if (!found) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh --tests installs Debian's chromium)";
    chromium_ = *found;
  }
  fs::path chromium_;
};

TEST_F(ReportInBrowser, IndexAndEveryPageLoadFromDiskWithTheirContentAndRenderVisibly) {
  const auto started = std::chrono::steady_clock::now();
  const TempDir dir("k3lab-report-browser");
  for (const auto& experiment : smoke_experiments()) install_fixture_run(experiment.id, dir / "runs");
  const auto report = run_k3lab({"report", "--runs", "runs", "--out", "report"}, hermetic(dir.path()));
  ASSERT_EQ(report.exit_code, 0) << report.output();
  const fs::path root = dir / "report";

  // The index links one HTML page per experiment and nothing that is not HTML or in-page.
  std::vector<std::string> pages = {"index.html"};
  std::set<std::string> linked;
  for (const std::string& target : link_targets(read_file(root / "index.html"))) {
    if (target.front() == '#' || target.find("/charts/") != std::string::npos) continue;
    EXPECT_EQ(fs::path(target).extension(), ".html") << "the index links a non-HTML page: " << target;
    linked.insert(target);
  }
  for (const auto& experiment : smoke_experiments()) {
    const std::string page = page_dir(experiment.id) + "/index.html";
    EXPECT_EQ(linked.count(page), 1u) << "the index does not link " << page;
    pages.push_back(page);
  }
  EXPECT_EQ(linked.size(), smoke_experiments().size());

  // Every href and src of every page names a file of the report.
  for (const std::string& page : pages) {
    for (const std::string& broken : broken_targets(root / page)) ADD_FAILURE() << broken;
  }

  const ProcessResult harness = dump_harness(chromium_, root, pages);
  ASSERT_EQ(harness.exit_code, 0) << harness.err;
  for (const std::string& line : console_lines(harness.err)) ADD_FAILURE() << "console message: " << line;
  const auto loaded = parse_harness_dom(harness.out);
  ASSERT_EQ(loaded.size(), pages.size()) << harness.out;
  for (const std::string& page : pages) {
    const PageInBrowser& seen = loaded.at(page);
    EXPECT_EQ(seen.images_loaded, seen.images) << page << ": an image did not load";
    if (page == "index.html") {
      EXPECT_GT(seen.images, 0) << "the index shows the charts";
      continue;
    }
    const MarkdownCounts markdown = count_markdown(read_file(root / fs::path(page).replace_filename("index.md")));
    EXPECT_EQ(seen.transfer, 1) << page << ": no can say / cannot say block";
    EXPECT_EQ(seen.can_say, markdown.can_say) << page;
    EXPECT_GT(seen.tables, 0) << page;
    EXPECT_EQ(seen.tables, markdown.tables) << page << ": the browser shows another number of tables than index.md";
  }

  const fs::path shots = screenshot_dir();
  TempDir blank_dir("k3lab-report-browser-blank");
  blank_dir.write("blank/index.html", "<!DOCTYPE html>\n<html><body></body></html>\n");
  const auto blank = take_screenshots(chromium_, blank_dir.path(), {"blank/index.html"}, blank_dir.path());
  const fs::path blank_png = blank_dir / "blank.png";
  ASSERT_TRUE(png_size(blank_png)) << blank.begin()->second.err;
  EXPECT_NE(screenshot_problem(blank_png, blank_png), "") << "the blank check cannot tell a blank page";
  for (const auto& [png, result] : take_screenshots(chromium_, root, pages, shots)) {
    EXPECT_EQ(result.exit_code, 0) << png << "\n" << result.err;
    EXPECT_EQ(screenshot_problem(png, blank_png), "");
  }
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "browser check of " << pages.size() << " pages: " << seconds << " s; screenshots in " << shots << "\n";
}

// The checks above can fail: a page with a missing image, a link to nothing, a link off the report and
// a script error is caught by each of them.
TEST_F(ReportInBrowser, TheChecksCatchAMissingImageABrokenLinkAndAConsoleError) {
  const TempDir dir("k3lab-report-browser-broken");
  dir.write("page/index.html",
            "<!DOCTYPE html>\n<html><body><h1>Broken</h1><img src=\"charts/missing.svg\" alt=\"x\">"
            "<a href=\"../nowhere.html\">x</a><a href=\"https://example.invalid/\">x</a>"
            "<script>console.error('deliberate error')</script></body></html>\n");
  EXPECT_EQ(broken_targets(dir / "page/index.html").size(), 3u);
  const ProcessResult harness = dump_harness(chromium_, dir.path(), {"page/index.html"});
  ASSERT_EQ(harness.exit_code, 0) << harness.err;
  EXPECT_FALSE(console_lines(harness.err).empty()) << harness.err;
  const auto loaded = parse_harness_dom(harness.out);
  ASSERT_EQ(loaded.count("page/index.html"), 1u) << harness.out;
  EXPECT_EQ(loaded.at("page/index.html").images, 1);
  EXPECT_EQ(loaded.at("page/index.html").images_loaded, 0);
  EXPECT_EQ(loaded.at("page/index.html").transfer, 0);
}

}  // namespace
}  // namespace k3lab::testing
