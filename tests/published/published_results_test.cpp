// Published results (docs/results/<name>/ at any depth, issue 13): every committed page regenerates byte
// for byte from the ledger committed beside it, through scripts/render-published-results.sh with the k3lab
// under test. The script itself is tried on private copies: its --write must leave exactly the page
// `k3lab report` renders (computed here without the script) beside the untouched run, notes and nested
// results; its --check must fail on an edited, a missing and an extra page file, and on a nested result
// without failing its parent; a compressed ledger must render the same page as a plain one. Only the
// second test depends on the committed page matching today's rendering.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"

namespace k3lab::testing {
namespace {

namespace fs = std::filesystem;

fs::path published_root() { return source_dir() / "docs" / "results"; }

// The published folders, at any depth, that carry a run (docs/results/<name>/run/), by relative path.
std::vector<std::string> published_runs() {
  std::vector<std::string> names;
  for (auto it = fs::recursive_directory_iterator(published_root()); it != fs::recursive_directory_iterator(); ++it) {
    if (!it->is_directory()) continue;
    if (it->path().filename() == "run") {
      names.push_back(fs::relative(it->path().parent_path(), published_root()).generic_string());
      it.disable_recursion_pending();
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// What the script must keep in a published folder, as it is: the run, its name, the hand-written notes and
// any subfolder that holds a published result of its own.
bool is_kept_beside_the_page(const fs::directory_entry& entry) {
  const auto name = entry.path().filename().string();
  if (name == "run" || name == "run-dir-name" || name == "RUN.md" || name == "README.md") return true;
  if (!entry.is_directory()) return false;
  for (const auto& inner : fs::recursive_directory_iterator(entry.path())) {
    if (inner.is_directory() && inner.path().filename() == "run") return true;
  }
  return false;
}

// scripts/render-published-results.sh <mode> --binary <k3lab under test> --results <root> [<name>]
// (no name: every published folder under <root>).
ProcessResult render_published(const std::string& mode, const fs::path& results_root, const std::string& name) {
  const auto script = source_dir() / "scripts" / "render-published-results.sh";
  std::vector<std::string> args = {script.string(),         "--" + mode, "--binary",
                                   k3lab_binary().string(), "--results", results_root.string()};
  if (!name.empty()) args.push_back(name);
  return run_program("/bin/bash", args);
}

// A private copy of docs/results/<name>/ under <dir>/results/, to break without touching the repository.
fs::path copy_published(const TempDir& dir, const std::string& name) {
  const auto copy = dir / "results" / name;
  fs::create_directories(copy);
  fs::copy(published_root() / name, copy, fs::copy_options::recursive);
  return copy;
}

// The copy with its page re-rendered by today's k3lab, so that a test of the script does not depend on
// the committed page still matching today's rendering.
fs::path rendered_copy(const TempDir& dir, const std::string& name) {
  const auto copy = copy_published(dir, name);
  const auto write = render_published("write", dir / "results", name);
  if (write.exit_code != 0) throw std::runtime_error("render-published-results.sh --write failed:\n" + write.output());
  return copy;
}

void append(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out << text;
  if (!out.good()) throw std::runtime_error("cannot append to " + file.string());
}

// The first file of a page's folder (a chart or a table), to remove.
fs::path first_file_under(const fs::path& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(folder)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error(folder.string() + " holds no file");
  return files.front();
}

// Gzip-compresses a plain file or decompresses a .gz one, in place.
void toggle_compression(const fs::path& file) {
  const std::string command = file.extension() == ".gz" ? "gzip -d \"$0\"" : "gzip -9 -n \"$0\"";
  const auto gzip = run_program("/bin/bash", {"-c", command, file.string()});
  if (gzip.exit_code != 0) throw std::runtime_error("gzip of " + file.string() + " failed:\n" + gzip.output());
}

// The page `k3lab report` renders from a published folder's run, without the script: the run goes
// to <dir>/runs/<experiment>/<run-dir-name>/ (ledgers decompressed); returns <dir>/report/<experiment>-<profile>.
fs::path report_page_of(const fs::path& published, const TempDir& dir) {
  const auto manifest = nlohmann::json::parse(read_file(published / "run" / "manifest.json"));
  std::string run_dir_name = read_file(published / "run-dir-name");
  run_dir_name.erase(run_dir_name.find_last_not_of(" \n") + 1);
  const auto experiment = manifest.at("experiment").get<std::string>();
  const auto run_dir = dir / "runs" / experiment / run_dir_name;
  fs::create_directories(run_dir.parent_path());
  fs::copy(published / "run", run_dir, fs::copy_options::recursive);
  for (const auto& entry : fs::directory_iterator(run_dir)) {
    if (entry.path().extension() == ".gz") toggle_compression(entry.path());
  }
  const auto report = run_k3lab({"report", "--runs", (dir / "runs").string(), "--out", (dir / "report").string()});
  if (report.exit_code != 0) throw std::runtime_error("k3lab report failed:\n" + report.output());
  return dir / "report" / (experiment + "-" + manifest.at("profile").get<std::string>());
}

TEST(PublishedResults, TheMemoryPoolResultIsPublishedWithItsLedger) {
  const auto names = published_runs();
  const auto memory_pool = [](const std::string& name) {
    return name == "memory-pool" || name.rfind("memory-pool/", 0) == 0;
  };
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), memory_pool))
      << "no docs/results/memory-pool[/<version>]/run/ (manifest and ledger): the published page must carry the "
         "ledger it was rendered from (docs/results/README.md)";
}

TEST(PublishedResults, EveryPublishedPageRegeneratesByteForByteFromItsLedger) {
  for (const auto& name : published_runs()) {
    const auto check = render_published("check", published_root(), name);
    EXPECT_EQ(check.exit_code, 0) << check.output()
                                  << "\nif the change of page rendering is intended, re-render the published page: "
                                     "scripts/render-published-results.sh --write "
                                  << name;
  }
}

TEST(PublishedResults, WriteLeavesTheReportsPageBesideTheUntouchedRunNotesAndNestedResults) {
  for (const auto& name : published_runs()) {
    const TempDir dir("k3lab-published-write");
    const auto copy = copy_published(dir, name);
    append(copy / "index.md", "one more line\n");
    append(copy / "stray.txt", "not rendered\n");
    fs::remove_all(copy / "tables");
    const auto write = render_published("write", dir / "results", name);
    ASSERT_EQ(write.exit_code, 0) << write.output();

    const TempDir reference("k3lab-published-reference");
    const auto expected = reference / "expected";
    fs::copy(report_page_of(published_root() / name, reference), expected, fs::copy_options::recursive);
    for (const auto& entry : fs::directory_iterator(published_root() / name)) {
      if (is_kept_beside_the_page(entry)) {
        fs::copy(entry.path(), expected / entry.path().filename(), fs::copy_options::recursive);
      }
    }
    const auto difference = tree_difference(expected, copy);
    EXPECT_TRUE(difference.empty()) << difference;
  }
}

TEST(PublishedResults, TheCheckFailsOnAnEditedAMissingOrAnExtraPageFile) {
  const auto names = published_runs();
  ASSERT_FALSE(names.empty()) << "no docs/results/<name>/run/ to test with";
  const std::string& name = names.front();
  struct Breakage {
    std::string what;
    std::string (*apply)(const fs::path& page);  // returns the name of the file it broke
  };
  const std::vector<Breakage> breakages = {
      {"an edited index.md",
       [](const fs::path& page) {
         append(page / "index.md", "one more line\n");
         return std::string("index.md");
       }},
      {"a missing chart",
       [](const fs::path& page) {
         const auto chart = first_file_under(page / "charts");
         fs::remove(chart);
         return chart.filename().string();
       }},
      {"an extra file",
       [](const fs::path& page) {
         append(page / "stray.txt", "not rendered\n");
         return std::string("stray.txt");
       }},
  };
  const TempDir pristine("k3lab-published-pristine");
  rendered_copy(pristine, name);
  const auto intact = render_published("check", pristine / "results", name);
  ASSERT_EQ(intact.exit_code, 0) << "a page just written fails the check:\n" << intact.output();
  for (const auto& breakage : breakages) {
    const TempDir dir("k3lab-published-broken");
    fs::copy(pristine / "results", dir / "results", fs::copy_options::recursive);
    const auto broken_file = breakage.apply(dir / "results" / name);
    const auto check = render_published("check", dir / "results", name);
    EXPECT_EQ(check.exit_code, 1) << breakage.what << " passed the check:\n" << check.output();
    EXPECT_NE(check.output().find(broken_file), std::string::npos)
        << "the check's output does not name " << broken_file << ":\n"
        << check.output();
  }
}

// The lead keeps earlier protocol versions' results in subfolders (docs/results/<id>/protocol-v1/): the
// script finds published folders at any depth and a nested result is never part of its parent's page.
TEST(PublishedResults, ResultsAreFoundAtAnyDepthAndANestedOneStaysOutOfItsParentsPage) {
  const auto names = published_runs();
  ASSERT_FALSE(names.empty()) << "no docs/results/<name>/run/ to test with";
  const TempDir dir("k3lab-published-nested");
  const auto outer = dir / "results" / "group" / "outer";
  fs::create_directories(outer);
  fs::copy(published_root() / names.front(), outer, fs::copy_options::recursive);
  fs::create_directories(outer / "older");
  fs::copy(published_root() / names.front(), outer / "older", fs::copy_options::recursive);
  const auto write = render_published("write", dir / "results", "");
  ASSERT_EQ(write.exit_code, 0) << write.output();
  ASSERT_TRUE(fs::is_directory(outer / "older" / "run")) << "--write of the outer result removed the nested one";

  const auto check = render_published("check", dir / "results", "");
  EXPECT_EQ(check.exit_code, 0) << check.output();
  for (const char* found : {"group/outer: the committed page regenerates", "group/outer/older: the committed"}) {
    EXPECT_NE(check.output().find(found), std::string::npos) << "expected \"" << found << "\" in:\n" << check.output();
  }

  append(outer / "older" / "index.md", "one more line\n");
  const auto broken = render_published("check", dir / "results", "");
  EXPECT_EQ(broken.exit_code, 1) << broken.output();
  EXPECT_NE(broken.output().find("group/outer: the committed page regenerates"), std::string::npos)
      << "an edit of the nested result's page made its parent fail:\n"
      << broken.output();
  EXPECT_NE(broken.output().find("group/outer/older: the committed page differs"), std::string::npos)
      << broken.output();
}

// The script decompresses ledger*.jsonl.gz; compressing a plain ledger (or decompressing a compressed one)
// must leave the rendered page unchanged.
TEST(PublishedResults, ACompressedOrPlainLedgerRendersTheSamePage) {
  const auto names = published_runs();
  ASSERT_FALSE(names.empty()) << "no docs/results/<name>/run/ to test with";
  const TempDir dir("k3lab-published-gzip");
  const auto copy = rendered_copy(dir, names.front());
  std::vector<fs::path> ledgers;
  for (const auto& entry : fs::directory_iterator(copy / "run")) {
    if (entry.path().filename().string().rfind("ledger", 0) == 0) ledgers.push_back(entry.path());
  }
  ASSERT_FALSE(ledgers.empty()) << "the published run holds no ledger*.jsonl[.gz]";
  for (const auto& ledger : ledgers) toggle_compression(ledger);
  const auto check = render_published("check", dir / "results", names.front());
  EXPECT_EQ(check.exit_code, 0) << check.output();
}

}  // namespace
}  // namespace k3lab::testing
