// End to end: `k3lab run router-balance --profile smoke --unfrozen` through the generic runner, then
// the report page from the ledger alone.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"
#include "k3lab/report/svg.hpp"
#include "router_balance/parameters.hpp"
#include "router_balance/units.hpp"

namespace k3lab::experiments::router_balance {
namespace {

TEST(RouterBalanceSmoke, TrainsEveryArmAndSeedThroughTheScheduleAndReports) {
  testing::TempDir runs("k3lab-router-balance-smoke");
  RunRequest request;
  request.experiment_id = "router-balance";
  request.profile = "smoke";
  request.runs_root = runs.path();
  request.unfrozen = true;
  request.options = {{"device", "cpu"}};
  request.protocol_file = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/router-balance.json";
  request.experiment_factory = make_experiment;
  const auto start = std::chrono::steady_clock::now();
  const auto summary = run_experiment(request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(summary.exit_code, kExitOk) << summary.message;
  const auto protocol = core::load_protocol(*request.protocol_file, &parameter_schema());
  const auto p = parse_parameters(protocol.parameters_for("smoke"));
  EXPECT_EQ(summary.planned, 4 * p.seeds.size());
  EXPECT_EQ(summary.results, summary.planned);

  RunRecords records{core::read_manifest(summary.run_dir), core::read_ledger(summary.run_dir), summary.run_dir};
  std::map<std::uint64_t, double> first_loss;
  for (const auto& r : records.terminal_records()) {
    ASSERT_EQ(r.at("kind"), "result") << r.dump();
    const auto& data = r.at("data");
    EXPECT_EQ(data.at("primary_losses").size(), static_cast<std::size_t>(p.total_updates()));
    EXPECT_EQ(data.at("logged").size(), static_cast<std::size_t>(p.measured_updates / p.log_interval_updates));
    EXPECT_EQ(data.at("logged").front().at("update").get<std::int64_t>(), p.warmup_updates);
    EXPECT_TRUE(std::filesystem::exists(summary.run_dir / data.at("routing_artifact").get<std::string>()));
    const auto arm = data.at("arm").get<std::string>();
    const bool bias_arm = arm == "fixed-step-bias" || arm == "quantile-balancing";
    EXPECT_EQ(data.at("metrics").at("correction_bias_oscillation").is_object(), bias_arm) << arm;
    // Same init and data in every arm: the first update's loss (before any control acts) is equal.
    const auto seed = data.at("seed").get<std::uint64_t>();
    const double loss0 = data.at("primary_losses").front().get<double>();
    if (first_loss.count(seed)) {
      EXPECT_DOUBLE_EQ(loss0, first_loss.at(seed)) << arm;
    } else {
      first_loss[seed] = loss0;
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
  for (const char* id : {"per-arm-results", "paired-comparisons"}) EXPECT_TRUE(tables.count(id)) << id;
  EXPECT_FALSE(tables.count("decision"));  // a smoke page reads no decision (docs/verdicts.md)
  for (const char* id : {"load-cv", "primary-loss", "max-to-mean-load", "dropped-token-rate"}) EXPECT_TRUE(charts.count(id)) << id;
  std::cout << "router-balance smoke profile: " << seconds << " s\n";
}

TEST(RouterBalanceSmoke, AMissingDatasetStopsTheRunBeforeAnyRecord) {
  testing::TempDir dir("k3lab-router-balance-smoke");
  RunRequest request;
  request.experiment_id = "router-balance";
  request.profile = "smoke";
  request.runs_root = dir.path() / "runs";
  request.unfrozen = true;
  request.set_overrides = {"data.dataset=\"fineweb-edu-sample-10BT\"", "data.tokenizer=\"gpt2\""};
  request.options = {{"device", "cpu"}, {"data_dir", (dir.path() / "data").string()}};
  request.protocol_file = std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/router-balance.json";
  request.experiment_factory = make_experiment;
  const auto summary = run_experiment(request);
  EXPECT_EQ(summary.exit_code, kExitError) << summary.message;
  EXPECT_NE(summary.message.find("fineweb-edu-sample-10BT"), std::string::npos) << summary.message;
  EXPECT_FALSE(std::filesystem::exists(request.runs_root)) << "a run dir was created for a run that cannot start";
}

}  // namespace
}  // namespace k3lab::experiments::router_balance
