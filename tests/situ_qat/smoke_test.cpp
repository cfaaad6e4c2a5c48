// The smoke profile end to end on the committed smoke run (a fresh run of this build equals it,
// tests/smoke), then the report page from the ledger alone; and a missing dataset stops a run early.
#include <gtest/gtest.h>

#include <set>

#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/units.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

TEST(SituQatSmoke, TrainsBothArmsOnEverySeedToTheBudgetAndReports) {
  // The committed smoke run, proven equal to a fresh run of this build by ExperimentSmoke (tests/smoke).
  const auto run_dir = k3lab::testing::smoke_fixture_run("situ-qat");
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  const auto p = parse_parameters(protocol.parameters_for("smoke"));
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  EXPECT_EQ(records.terminal_records().size(), 2 * p.seeds.size());
  for (const auto& r : records.terminal_records()) {
    ASSERT_EQ(r.at("kind"), "result") << r.dump();
    const auto& data = r.at("data");
    EXPECT_EQ(data.at("training").at("tokens").get<std::int64_t>(), p.token_budget);
    std::size_t checkpoints = 0;
    for (const auto& e : data.at("training").at("evaluations")) {
      if (e.at("probes").contains("activations")) ++checkpoints;
    }
    EXPECT_EQ(static_cast<std::int64_t>(checkpoints), p.token_budget / p.histogram_interval_tokens);
    EXPECT_EQ(data.at("loss_spikes").at("window_updates"), p.loss_spike_window_updates);
    EXPECT_TRUE(data.at("downstream_task_quality").at("measured").get<bool>());
    EXPECT_EQ(data.at("downstream_task_quality").at("final").at("tokens"), p.token_budget);
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
  for (const char* id : {"final-metrics", "paired-comparisons", "downstream", "downstream-paired"}) {
    EXPECT_TRUE(tables.count(id)) << id;
  }
  EXPECT_FALSE(tables.count("decision"));  // a smoke page reads no decision (docs/verdicts.md)
  for (const char* id : {"activation-tails", "validation-loss", "downstream-by-tokens"}) EXPECT_TRUE(charts.count(id)) << id;
}

TEST(SituQatSmoke, AMissingDatasetStopsTheRunBeforeAnyRecord) {
  k3lab::testing::TempDir dir("k3lab-situ-qat-nodata");
  RunRequest request;
  request.experiment_id = "situ-qat";
  request.profile = "smoke";
  request.runs_root = dir.path() / "runs";
  request.unfrozen = true;
  request.set_overrides = {"data.dataset=\"fineweb-edu-sample-10BT\""};  // the byte suite stays valid
  request.options = {{"device", "cpu"}, {"data_dir", (dir.path() / "data").string()}};
  request.protocol_file = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json";
  request.experiment_factory = make_experiment;
  const auto summary = run_experiment(request);
  EXPECT_EQ(summary.exit_code, kExitError) << summary.message;
  EXPECT_NE(summary.message.find("fineweb-edu-sample-10BT"), std::string::npos) << summary.message;
  EXPECT_FALSE(std::filesystem::exists(request.runs_root)) << "a run dir was created for a run that cannot start";
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat
