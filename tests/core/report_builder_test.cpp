#include <gtest/gtest.h>

#include <fstream>

#include "common/files.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "run_dir_fixture.hpp"
#include "test_protocol_fixture.hpp"

using namespace k3lab;
using k3lab::testing::complete_manifest;
using k3lab::testing::kPlan;
using k3lab::testing::kResult;
using k3lab::testing::make_run;
using k3lab::testing::minimal_protocol;
using k3lab::testing::read_file;
using k3lab::testing::read_tree;
using k3lab::testing::TempDir;

namespace {

// A module whose page is one table of its terminal records, so the page depends on the ledger.
class TableExperiment : public experiments::Experiment {
 public:
  explicit TableExperiment(std::string id) : id_(std::move(id)) {}
  std::string id() const override { return id_; }
  const core::Schema& parameter_schema() const override { return schema_; }
  std::vector<experiments::Unit> enumerate(const core::Protocol&, const nlohmann::json&) const override { return {}; }
  experiments::UnitOutcome run_unit(const experiments::Unit&, experiments::RunEnv&) override {
    throw std::logic_error("not run in these tests");
  }
  void summarise(const core::Protocol&, const experiments::RunRecords& records, report::Page& page) const override {
    report::Table table;
    table.id = "units";
    table.columns = {"unit", "kind"};
    for (const auto& r : records.terminal_records()) {
      table.rows.push_back({report::Cell(r["unit"].get<std::string>()), report::Cell(r["kind"].get<std::string>())});
    }
    page.add_table(std::move(table));
  }

 private:
  std::string id_;
  core::Schema schema_;
};

experiments::Catalog catalog() {
  return {{"memory-pool", "agent-replay", "router-balance"},
          [](const std::string& id) { return std::make_unique<TableExperiment>(id); }};
}


std::filesystem::path good_run(const std::filesystem::path& runs) {
  return make_run(runs, complete_manifest(minimal_protocol("memory-pool"), "full", 2),
                  {kPlan,
                   {{"kind", "result"}, {"unit", "u1"}},
                   {{"kind", "invalid"}, {"unit", "u2"}, {"reason", "r"}}});
}

}  // namespace

TEST(ReportBuilder, OneDamagedRunDirDoesNotStopTheOthers) {
  TempDir dir;
  const auto runs = dir / "runs";
  const auto good = good_run(runs);
  // agent-replay: a complete manifest but a ledger line that is not a record.
  const auto bad_ledger = make_run(runs, complete_manifest(minimal_protocol("agent-replay"), "full", 2), {kPlan});
  std::ofstream(bad_ledger / "ledger.jsonl", std::ios::app) << "42\n";
  // router-balance: a ledger whose manifest was deleted.
  const auto no_manifest =
      make_run(runs, complete_manifest(minimal_protocol("router-balance"), "smoke", 2), {kPlan});
  std::filesystem::remove(no_manifest / "manifest.json");

  const auto outcome = experiments::build_reports(runs, dir / "report", catalog());
  ASSERT_EQ(outcome.damaged.size(), 2u);
  EXPECT_EQ(outcome.damaged[0].run_dir, bad_ledger);
  EXPECT_NE(outcome.damaged[0].error.find("ledger.jsonl line 2 is not a ledger record"), std::string::npos)
      << outcome.damaged[0].error;
  EXPECT_EQ(outcome.damaged[1].run_dir, no_manifest);
  EXPECT_NE(outcome.damaged[1].error.find("manifest.json is missing"), std::string::npos) << outcome.damaged[1].error;

  ASSERT_EQ(outcome.entries.size(), 3u);
  EXPECT_EQ(outcome.entries[0].experiment_id, "memory-pool");
  EXPECT_EQ(outcome.entries[0].status, "complete: 2 of 2 units (results 1, invalid 1, failures 0)");
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(outcome.entries[i].status.rfind("DAMAGED: ", 0), 0u) << outcome.entries[i].status;
  }
  // The index names each damaged run dir with its error; each has a note page.
  const std::string html = read_file(dir / "report/index.html");
  const std::string readme = read_file(dir / "report/README.md");
  for (const auto& damaged : outcome.damaged) {
    const std::string name = damaged.run_dir.filename().string();
    EXPECT_NE(html.find(name), std::string::npos) << name;
    EXPECT_NE(readme.find(name), std::string::npos) << name;
    EXPECT_NE(read_file(dir / "report/damaged" / damaged.experiment_id / name / "index.md").find(damaged.error),
              std::string::npos);
  }
  EXPECT_NE(html.find("DAMAGED: "), std::string::npos);
  EXPECT_NE(html.find("line 2 is not a ledger record"), std::string::npos);

  // The good run's page is byte for byte the page of a report over it alone.
  const auto alone = dir / "alone";
  std::filesystem::create_directories(alone / "memory-pool");
  std::filesystem::copy(good, alone / "memory-pool" / good.filename(), std::filesystem::copy_options::recursive);
  const auto clean = experiments::build_reports(alone, dir / "report-alone", catalog());
  EXPECT_TRUE(clean.damaged.empty());
  ASSERT_EQ(clean.entries.size(), 1u);
  const std::string page_dir = clean.entries[0].page_dir;
  EXPECT_EQ(read_tree(dir / "report" / page_dir), read_tree(dir / "report-alone" / page_dir));
  EXPECT_FALSE(std::filesystem::exists(dir / "report-alone/damaged"));
}

// Two processes wrote a terminal record for u1 (before leases): the page is still rendered, says
// LEDGER ERROR at the top, lists both records in its failure log, and the outcome makes `report` fail.
TEST(ReportBuilder, DuplicateTerminalRecordsAreShownLoudlyNotPickedFrom) {
  TempDir dir;
  const auto runs = dir / "runs";
  const auto run = make_run(runs, complete_manifest(minimal_protocol("memory-pool"), "full", 2),
                            {kPlan, kResult, {{"kind", "failure"}, {"unit", "u1"}, {"reason", "exception"}},
                             {{"kind", "result"}, {"unit", "u2"}}});
  const auto page = experiments::build_page(run, runs, catalog());
  EXPECT_EQ(page.status.rfind(experiments::kLedgerErrorStatus, 0), 0u) << page.status;
  std::size_t duplicate_entries = 0;
  for (const auto& f : page.failures) duplicate_entries += f.kind == "duplicate" ? 1 : 0;
  EXPECT_EQ(duplicate_entries, 1u);
  const auto outcome = experiments::build_reports(runs, dir / "report", catalog());
  ASSERT_EQ(outcome.ledger_errors.size(), 1u);
  EXPECT_EQ(outcome.ledger_errors[0].run_dir, run);
  EXPECT_TRUE(outcome.damaged.empty());
  ASSERT_EQ(outcome.entries.size(), 1u);
  EXPECT_EQ(outcome.entries[0].status.rfind(experiments::kLedgerErrorStatus, 0), 0u);
}

TEST(ReportBuilder, NotesOfRepairedRunDirsDisappear) {
  TempDir dir;
  const auto runs = dir / "runs";
  good_run(runs);
  const auto bad = make_run(runs, complete_manifest(minimal_protocol("agent-replay"), "full", 2), {kPlan});
  std::ofstream(bad / "ledger.jsonl", std::ios::app) << "[]\n";
  EXPECT_EQ(experiments::build_reports(runs, dir / "report", catalog()).damaged.size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(dir / "report/damaged"));
  std::filesystem::remove_all(bad);
  const auto repaired = experiments::build_reports(runs, dir / "report", catalog());
  EXPECT_TRUE(repaired.damaged.empty());
  EXPECT_EQ(repaired.entries.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir / "report/damaged"));
  EXPECT_EQ(read_file(dir / "report/index.html").find("DAMAGED"), std::string::npos);
}
