// The smoke profile end to end on the committed smoke run (a fresh run of this build equals it,
// tests/smoke), then the report page from the ledger alone; and a missing dataset stops a run early.
#include <gtest/gtest.h>

#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "hybrid_attention/parameters.hpp"
#include "hybrid_attention/units.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

TEST(HybridAttentionSmoke, TrainsEveryArmAndSeedToTheBudgetAndReports) {
  // The committed smoke run, proven equal to a fresh run of this build by ExperimentSmoke (tests/smoke).
  const auto run_dir = k3lab::testing::smoke_fixture_run("hybrid-attention");
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/hybrid-attention.json", &parameter_schema());
  const auto p = parse_parameters(protocol.parameters_for("smoke"));
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  EXPECT_EQ(records.terminal_records().size(), 3 * p.seeds.size());
  for (const auto& r : records.terminal_records()) {
    ASSERT_EQ(r.at("kind"), "result") << r.dump();
    const auto& data = r.at("data");
    EXPECT_EQ(data.at("training").at("tokens").get<std::int64_t>(), p.token_budget);
    EXPECT_LE(std::abs(data.at("parameter_error").get<double>()), p.parameter_tolerance);
    EXPECT_EQ(data.at("final").at("inference_memory").size(), p.long_context_lengths.size());
  }
  report::Page page;
  make_experiment()->summarise(protocol, records, page);
  std::set<std::string> tables, charts;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table) tables.insert(block.table.id);
    if (block.kind == report::Block::Kind::Chart) charts.insert(block.chart.id);
  }
  EXPECT_TRUE(tables.count("final-metrics"));
  EXPECT_TRUE(tables.count("retrieval-by-length"));
  EXPECT_FALSE(tables.count("decision"));  // a smoke page reads no decision (docs/verdicts.md)
  EXPECT_TRUE(charts.count("quality-memory-frontier"));
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Chart) {
      EXPECT_NO_THROW(report::chart_svg(block.chart)) << block.chart.id;
    }
  }
}

TEST(HybridAttentionSmoke, AMissingDatasetStopsTheRunBeforeAnyRecord) {
  k3lab::testing::TempDir runs("k3lab-hybrid-nodata");
  RunRequest request;
  request.experiment_id = "hybrid-attention";
  request.profile = "smoke";
  request.runs_root = runs.path() / "runs";
  request.unfrozen = true;
  request.set_overrides = {"data.dataset=\"fineweb-edu-sample-10BT\""};  // the byte suite stays valid
  request.options = {{"device", "cpu"}, {"data_dir", (runs.path() / "data").string()}};
  request.protocol_file = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/hybrid-attention.json";
  request.experiment_factory = make_experiment;
  const auto summary = run_experiment(request);
  EXPECT_EQ(summary.exit_code, kExitError) << summary.message;
  EXPECT_NE(summary.message.find("cannot start"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("fineweb-edu-sample-10BT"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("--data-dir"), std::string::npos) << summary.message;  // names the fix
  EXPECT_FALSE(std::filesystem::exists(request.runs_root)) << "a run dir was created for a run that cannot start";
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
