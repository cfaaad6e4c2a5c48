// Golden report pages: each experiment's page rendered from its committed smoke ledger
// (fixtures/reports/<id>/run) equals, byte for byte, the page the build that recorded it rendered
// (fixtures/reports/<id>/expected); so do the report's index.html and README.md over all of them
// (fixtures/reports/index).
#include <gtest/gtest.h>

#include "common/files.hpp"
#include "common/k3lab_process.hpp"
#include "common/temp_dir.hpp"
#include "smoke_support.hpp"

namespace k3lab::testing {
namespace {

class GoldenReport : public ::testing::TestWithParam<SmokeExperiment> {};

TEST_P(GoldenReport, PagesFromTheCommittedLedgerMatchByteForByte) {
  const auto& id = GetParam().id;
  const TempDir dir("k3lab-golden-" + id);
  install_fixture_run(id, dir / "runs");
  const auto report = run_k3lab({"report", "--runs", "runs", "--out", "report"}, hermetic(dir.path()));
  ASSERT_EQ(report.exit_code, 0) << report.output();
  const auto difference = tree_difference(report_fixture(id).expected(), dir / "report" / page_dir(id), mask_analysis_statement);
  EXPECT_TRUE(difference.empty()) << difference
                                  << "if the change of the page is intended, re-render the expected pages "
                                     "(fixtures/reports/README.md)";
}

// Whatever each module writes, a smoke page opens with the banner and reads no verdict (issue 13): the
// rendered page of every experiment is searched for the verdict forms the modules use on full runs.
TEST_P(GoldenReport, ASmokePageOpensWithTheBannerAndStatesNoVerdict) {
  const auto& id = GetParam().id;
  const TempDir dir("k3lab-smoke-verdict-" + id);
  install_fixture_run(id, dir / "runs");
  const auto report = run_k3lab({"report", "--runs", "runs", "--out", "report"}, hermetic(dir.path()));
  ASSERT_EQ(report.exit_code, 0) << report.output();
  const std::string page = read_file(dir / "report" / page_dir(id) / "index.md");
  // Spelled out here: the end-to-end tests link no k3lab library, and the wording is part of the contract.
  const auto banner = page.find("SMOKE PROFILE: toy sizes; not evidence about the hypothesis");
  ASSERT_NE(banner, std::string::npos) << page.substr(0, 600);
  EXPECT_LT(banner, page.find("\n## ")) << "the banner must come before the first section";
  for (const char* verdict : {"**supported**", "**not supported**", "**refuted**", "| supported |", "| refuted |",
                              "| unresolved |", "| not supported |", "SUPPORTED", "GAIN CLAIMED", "| win |"}) {
    EXPECT_EQ(page.find(verdict), std::string::npos) << id << " smoke page states a verdict: " << verdict;
  }
}

INSTANTIATE_TEST_SUITE_P(Experiments, GoldenReport, ::testing::ValuesIn(smoke_experiments()),
                         [](const auto& info) { return test_name(info.param.id); });

TEST(GoldenReportIndex, IndexAndReadmeOverEveryFixtureMatchByteForByte) {
  const TempDir dir("k3lab-golden-index");
  for (const auto& experiment : smoke_experiments()) install_fixture_run(experiment.id, dir / "runs");
  const auto report = run_k3lab({"report", "--runs", "runs", "--out", "report"}, hermetic(dir.path()));
  ASSERT_EQ(report.exit_code, 0) << report.output();
  const auto expected = source_dir() / "fixtures" / "reports" / "index";
  for (const char* file : {"index.html", "README.md"}) {
    const auto difference = unified_diff(read_file(expected / file), read_file(dir / "report" / file),
                                         (expected / file).string(), (dir / "report" / file).string());
    EXPECT_TRUE(difference.empty()) << difference;
  }
}

}  // namespace
}  // namespace k3lab::testing
