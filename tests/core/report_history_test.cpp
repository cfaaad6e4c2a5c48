// Every run on the report (docs/verdicts.md): the latest complete run is the headline, every other run
// (earlier, stopped by its window rule, incomplete) keeps its own page under the headline's runs/
// folder, and every page of the group lists them all.
#include <gtest/gtest.h>

#include "common/files.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/analysis_info.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "k3lab/experiments/run_publication.hpp"
#include "run_dir_fixture.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab;
using k3lab::testing::complete_manifest;
using k3lab::testing::make_run;
using k3lab::testing::minimal_protocol;
using k3lab::testing::read_file;
using k3lab::testing::TempDir;

namespace {

class NoPageExperiment : public experiments::Experiment {
 public:
  std::string id() const override { return "memory-pool"; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<experiments::Unit> enumerate(const core::Protocol&, const nlohmann::json&) const override { return {}; }
  experiments::UnitOutcome run_unit(const experiments::Unit&, experiments::RunEnv&) override {
    throw std::logic_error("not run in these tests");
  }
  void summarise(const core::Protocol&, const experiments::RunRecords&, report::Page&) const override {}

 private:
  core::Schema schema_;
};

experiments::Catalog history_catalog() {
  return {{"memory-pool"}, [](const std::string&) { return std::make_unique<NoPageExperiment>(); }};
}

const nlohmann::json kTwoUnitPlan = {{"kind", "plan"}, {"units", {"u1", "u2"}}};

nlohmann::json terminal(const std::string& kind, const std::string& unit, double seconds) {
  return {{"kind", kind}, {"unit", unit}, {"data", nlohmann::json::object()}, {"timing", {{"unit_seconds", seconds}}}};
}

// A run of memory-pool's full profile that started at `started_at`, holding `records`.
std::filesystem::path run_at(const std::filesystem::path& runs, const std::string& started_at,
                             const std::vector<nlohmann::json>& records) {
  auto manifest = complete_manifest(minimal_protocol("memory-pool"), "full", 2);
  manifest["provenance"] = {{"started_at", started_at}, {"source_revision", "abc123"}, {"source_dirty", false}};
  return make_run(runs, manifest, records);
}

std::string shown(const std::filesystem::path& run) {
  return "memory-pool/" + run.filename().string();
}

}  // namespace

TEST(ReportHistory, TheLatestCompleteRunHeadsAndAStoppedLaterRunKeepsItsOwnPage) {
  TempDir dir;
  const auto runs = dir / "runs";
  const auto earlier = run_at(runs, "2026-01-01T00:00:00.000Z",
                              {kTwoUnitPlan, terminal("result", "u1", 1), terminal("result", "u2", 2)});
  const auto complete = run_at(runs, "2026-01-02T00:00:00.000Z",
                               {kTwoUnitPlan, terminal("result", "u1", 1), terminal("failure", "u2", 3)});
  const auto stopped = run_at(runs, "2026-01-03T00:00:00.000Z",
                              {kTwoUnitPlan, terminal("invalid", "u1", 1),
                               {{"kind", "window"}, {"stop", true}, {"reason", "too many invalid"}}});

  const auto outcome = experiments::build_reports(runs, dir / "report", history_catalog());
  ASSERT_EQ(outcome.entries.size(), 1u);
  EXPECT_NE(outcome.entries[0].status.find("headline of 3 runs"), std::string::npos) << outcome.entries[0].status;
  const auto folder = dir / "report" / outcome.entries[0].page_dir;
  const std::string headline = read_file(folder / "index.md");
  // The headline is the latest complete run (its failure is an outcome, not incompleteness).
  EXPECT_NE(headline.find("**Run:** `" + shown(complete) + "`"), std::string::npos) << headline;
  EXPECT_EQ(headline.find("NOT THE HEADLINE RUN"), std::string::npos);
  // Every run is listed with its status, window rule, failure count and a working link.
  for (const auto& run : {earlier, stopped}) {
    const std::string name = run.filename().string();
    EXPECT_NE(headline.find("`" + shown(run) + "`"), std::string::npos) << name;
    EXPECT_NE(headline.find("(runs/" + name + "/index.md)"), std::string::npos) << name;
    const std::string other = read_file(folder / "runs" / name / "index.md");
    EXPECT_NE(other.find("**NOT THE HEADLINE RUN:**"), std::string::npos) << other;
    EXPECT_NE(other.find("(../../index.md)"), std::string::npos) << other;
    EXPECT_TRUE(std::filesystem::exists(folder / "runs" / name / "index.html"));
    // The HTML page links back to the report root three folders up.
    EXPECT_NE(read_file(folder / "runs" / name / "index.html").find("href=\"../../../index.html\""),
              std::string::npos);
  }
  EXPECT_NE(headline.find("window rule: too many invalid; failures: 0"), std::string::npos) << headline;
  EXPECT_NE(headline.find("(headline, this page): complete: 2 of 2 units (results 1, invalid 0, failures 1); "
                          "failures: 1"),
            std::string::npos)
      << headline;
  // A later run's page links to the headline and its sibling.
  const std::string stopped_page = read_file(folder / "runs" / stopped.filename().string() / "index.md");
  EXPECT_NE(stopped_page.find("a later run that is not complete"), std::string::npos);
  EXPECT_NE(stopped_page.find("(../../runs/" + earlier.filename().string() + "/index.md)"), std::string::npos);
  // In HTML the links open the HTML pages.
  const std::string headline_html = read_file(folder / "index.html");
  EXPECT_NE(headline_html.find("href=\"runs/" + earlier.filename().string() + "/index.html\""), std::string::npos);
}

TEST(ReportHistory, WithNoCompleteRunTheLatestHeadsAndAOneRunGroupSaysSo) {
  TempDir dir;
  const auto runs = dir / "runs";
  const auto first = run_at(runs, "2026-01-01T00:00:00.000Z", {kTwoUnitPlan, terminal("result", "u1", 1)});
  const auto second = run_at(runs, "2026-01-02T00:00:00.000Z", {kTwoUnitPlan});
  auto outcome = experiments::build_reports(runs, dir / "report", history_catalog());
  ASSERT_EQ(outcome.entries.size(), 1u);
  const auto folder = dir / "report" / outcome.entries[0].page_dir;
  EXPECT_NE(read_file(folder / "index.md").find("**Run:** `" + shown(second) + "`"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(folder / "runs" / first.filename().string() / "index.md"));

  TempDir alone;
  run_at(alone / "runs", "2026-01-01T00:00:00.000Z", {kTwoUnitPlan, terminal("result", "u1", 1)});
  outcome = experiments::build_reports(alone / "runs", alone / "report", history_catalog());
  const std::string page = read_file(alone / "report" / outcome.entries[0].page_dir / "index.md");
  EXPECT_NE(page.find("This is the only run of memory-pool at the full profile"), std::string::npos) << page;
  EXPECT_FALSE(std::filesystem::exists(alone / "report" / outcome.entries[0].page_dir / "runs"));
}

// The Reproduce section: revision, commands, wall time per run and in total, tokens.
TEST(ReportHistory, ThePageStatesRevisionCommandsWallTimeAndTokens) {
  TempDir dir;
  auto manifest = complete_manifest(minimal_protocol("memory-pool"), "full", 2);
  manifest["provenance"] = {{"started_at", "2026-01-01T00:00:00.000Z"},
                            {"source_revision", "0123abcd"},
                            {"source_dirty", true},
                            {"command_line", {"k3lab", "run", "memory-pool"}}};
  auto with_tokens = terminal("result", "u1", 1.5);
  with_tokens["data"] = {{"training", {{"tokens", 4096}}}};
  make_run(dir / "runs", manifest, {kTwoUnitPlan, with_tokens, terminal("failure", "u2", 2.5)});
  const auto outcome = experiments::build_reports(dir / "runs", dir / "report", history_catalog());
  const auto folder = dir / "report" / outcome.entries[0].page_dir;
  const std::string page = read_file(folder / "index.md");
  EXPECT_NE(page.find("**Source revision:** `0123abcd` — **DIRTY TREE**"), std::string::npos) << page;
  EXPECT_NE(page.find("as recorded: `k3lab run memory-pool`"), std::string::npos);
  EXPECT_NE(page.find("4 s of unit time over 2 ended units (median 2 s, longest 2.5 s per unit)"), std::string::npos)
      << page;
  EXPECT_NE(page.find("4096 training tokens"), std::string::npos);
  const std::string csv = read_file(folder / "tables" / "wall-time-by-run.csv");
  EXPECT_NE(csv.find("u1,result,1.5,4096"), std::string::npos) << csv;
  EXPECT_NE(csv.find("u2,failure,2.5,"), std::string::npos) << csv;
  // A run dir with no revision says so rather than "unknown".
  manifest["provenance"] = {{"source_revision", ""}, {"source_revision_from", "none: not a git checkout"}};
  TempDir bare;
  make_run(bare / "runs", manifest, {kTwoUnitPlan});
  const auto bare_outcome = experiments::build_reports(bare / "runs", bare / "report", history_catalog());
  EXPECT_NE(read_file(bare / "report" / bare_outcome.entries[0].page_dir / "index.md")
                .find("**Source revision: NOT RECORDED** (none: not a git checkout)"),
            std::string::npos);
  // Manifests written before the build tree was asked say "unknown": not a revision either.
  manifest["provenance"] = {{"source_revision", "unknown"}};
  TempDir old;
  make_run(old / "runs", manifest, {kTwoUnitPlan});
  const auto old_outcome = experiments::build_reports(old / "runs", old / "report", history_catalog());
  const std::string old_page = read_file(old / "report" / old_outcome.entries[0].page_dir / "index.md");
  EXPECT_NE(old_page.find("**Source revision: NOT RECORDED**"), std::string::npos) << old_page;
  EXPECT_EQ(old_page.find("`unknown`"), std::string::npos);
}

// Hints repeat the runs folder the run was started with (issue 16): following "resume with" or the
// regenerate command from the page finds the same run, not a new one under the default folder.
TEST(ReportHistory, ResumeAndRegenerateHintsRepeatTheRecordedRunsFolder) {
  TempDir dir;
  auto manifest = complete_manifest(minimal_protocol("memory-pool"), "full", 2);
  manifest["provenance"] = {{"started_at", "2026-01-01T00:00:00.000Z"},
                            {"command_line", {"build/k3lab", "run", "memory-pool", "--profile", "full", "--out", "lab runs"}}};
  make_run(dir / "runs", manifest, {kTwoUnitPlan, terminal("result", "u1", 1)});
  const auto outcome = experiments::build_reports(dir / "runs", dir / "report", history_catalog());
  const std::string page = read_file(dir / "report" / outcome.entries[0].page_dir / "index.md");
  EXPECT_NE(page.find("INCOMPLETE: 1 of 2 units"), std::string::npos) << page;
  EXPECT_NE(page.find("resume with `build/k3lab run memory-pool --profile full --out 'lab runs'`"), std::string::npos)
      << page;
  EXPECT_NE(page.find("`build/k3lab report --runs 'lab runs'`"), std::string::npos) << page;

  const auto with_argv = [&](nlohmann::json argv) {
    manifest["provenance"]["command_line"] = std::move(argv);
    return experiments::recorded_runs_folder(manifest);
  };
  EXPECT_EQ(with_argv({"k3lab", "run", "x", "--out=elsewhere"}), "elsewhere");
  EXPECT_EQ(with_argv({"k3lab", "run", "x", "--out", "runs"}), "") << "the default folder needs no option";
  EXPECT_EQ(with_argv({"k3lab", "run", "x"}), "");
  EXPECT_EQ(with_argv({"k3lab", "run", "x", "--out", "it's"}), "'it'\\''s'");
  EXPECT_EQ(experiments::resume_command(manifest, "x", "smoke"), "build/k3lab run x --profile smoke --out 'it'\\''s'");
}

// A page says whether the analysis that rendered it is the one frozen with the protocol when its run
// started (the manifest's freeze record), a different one, or that none was frozen.
TEST(ReportHistory, APageSaysWhetherItWasRenderedByTheFrozenAnalysis) {
  auto manifest = complete_manifest(minimal_protocol("memory-pool"), "full", 2, /*frozen=*/true);
  EXPECT_NE(experiments::analysis_statement(manifest).find("names no analysis"), std::string::npos);
  manifest["freeze_record"]["analysis"] = {{"version", build::kAnalysisVersion},
                                           {"sources_sha256", build::kAnalysisSha256}};
  EXPECT_NE(experiments::analysis_statement(manifest).find("the same analysis was frozen with the protocol"),
            std::string::npos);
  manifest["freeze_record"]["analysis"]["sources_sha256"] = std::string(64, '0');
  const std::string differs = experiments::analysis_statement(manifest);
  EXPECT_NE(differs.find("**DIFFERS from the analysis frozen with the protocol** (version " +
                         std::string(build::kAnalysisVersion) + ", sources sha256 `" + std::string(64, '0') + "`)"),
            std::string::npos)
      << differs;
  EXPECT_NE(differs.find(build::kAnalysisSha256), std::string::npos) << "names the analysis that rendered it";
  manifest["frozen"] = false;
  EXPECT_NE(experiments::analysis_statement(manifest).find("not frozen"), std::string::npos);
}
