// The smoke profile end to end on the committed smoke run (a fresh run of this build equals it,
// tests/smoke): pilot search, selection, confirmatory runs, then the page from the ledger alone; and the
// phase rule: a confirmatory unit run before its pilots refuses.
#include <gtest/gtest.h>

#include <set>

#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/report/svg.hpp"
#include "per_head_muon/parameters.hpp"
#include "per_head_muon/run_unit.hpp"
#include "per_head_muon/selection.hpp"
#include "per_head_muon/units.hpp"

namespace k3lab::experiments::per_head_muon {
namespace {

RunRequest smoke_request(const std::filesystem::path& runs) {
  RunRequest request;
  request.experiment_id = "per-head-muon";
  request.profile = "smoke";
  request.runs_root = runs;
  request.unfrozen = true;
  request.options = {{"device", "cpu"}};
  request.protocol_file = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/per-head-muon.json";
  request.experiment_factory = make_experiment;
  return request;
}

TEST(PerHeadMuonPhases, AConfirmatoryUnitBeforeItsPilotsRefusesAndStopsTheRun) {
  k3lab::testing::TempDir runs("k3lab-per-head-muon-phase");
  auto request = smoke_request(runs.path());
  request.only_units = {confirmatory_unit_id("muon", 7201)};
  const auto summary = run_experiment(request);
  EXPECT_EQ(summary.exit_code, kExitWindowStopped) << summary.message;
  RunRecords records{core::read_manifest(summary.run_dir), core::read_ledger(summary.run_dir), summary.run_dir};
  const auto terminal = records.terminal_records();
  ASSERT_EQ(terminal.size(), 1u);
  EXPECT_EQ(terminal[0].at("kind"), "invalid");
  EXPECT_EQ(terminal[0].at("reason"), kPilotsUnfinished);
  EXPECT_NE(terminal[0].at("detail").get<std::string>().find("pilot"), std::string::npos);
  EXPECT_FALSE(terminal[0].at("data").contains("training"));
}

TEST(PerHeadMuonSmoke, RunsPilotsSelectsConfirmsAndReports) {
  // The committed smoke run, proven equal to a fresh run of this build by ExperimentSmoke (tests/smoke).
  const auto run_dir = k3lab::testing::smoke_fixture_run("per-head-muon");
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/per-head-muon.json", &parameter_schema());
  const auto p = parse_parameters(protocol.parameters_for("smoke"));
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  const auto grid = p.configurations().size();
  const auto terminal = records.terminal_records();
  EXPECT_EQ(terminal.size(), 3 * grid * p.pilot_seeds.size() + 3 * p.confirmatory_seeds.size());
  for (const auto& r : terminal) {
    ASSERT_EQ(r.at("kind"), "result") << r.dump();
    const auto& data = r.at("data");
    const auto budget = r.at("spec").at("token_budget").get<std::int64_t>();
    EXPECT_EQ(data.at("training").at("tokens").get<std::int64_t>(), budget);
    // End-task quality belongs to the confirmatory runs; pilots are not scored.
    const bool confirmatory = r.at("spec").at("phase") == "confirmatory";
    EXPECT_EQ(data.contains("end_task_quality"), confirmatory);
    if (confirmatory) {
      EXPECT_TRUE(data.at("end_task_quality").at("measured").get<bool>());
    }
    EXPECT_TRUE(r.at("timing").contains("optimizer_step_time_s"));
    for (const auto& e : data.at("training").at("evaluations")) {
      EXPECT_TRUE(e.at("probes").contains("update_norm_dispersion")) << e.dump();
      EXPECT_TRUE(e.at("probes").contains("head_diversity"));
    }
    if (data.at("phase") == "confirmatory") {
      const auto expected = select_configuration(p, data.at("arm"), terminal);
      ASSERT_TRUE(expected.selected);
      EXPECT_EQ(data.at("configuration").at("config").get<int>(), expected.selected->id);
      EXPECT_EQ(data.at("selection").at("rule"), kSelectionRule);
    }
  }
  report::Page page;
  make_experiment()->summarise(protocol, records, page);
  std::set<std::string> tables, charts;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table) tables.insert(block.table.id);
    if (block.kind == report::Block::Kind::Chart) {
      charts.insert(block.chart.id);
      EXPECT_NO_THROW(report::chart_svg(block.chart)) << block.chart.id;
    }
  }
  for (const char* id : {"terminal-records-by-phase-and-arm", "pilot-selection", "confirmatory-metrics",
                         "paired-comparisons"}) {
    EXPECT_TRUE(tables.count(id)) << id;
  }
  EXPECT_FALSE(tables.count("decision"));  // a smoke page reads no decision (docs/verdicts.md)
  EXPECT_TRUE(charts.count("validation-loss"));
}

}  // namespace
}  // namespace k3lab::experiments::per_head_muon
