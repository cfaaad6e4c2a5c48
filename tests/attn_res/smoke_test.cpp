// The smoke profile end to end: every arm and seed of the committed smoke run (a fresh run of this build
// equals it, tests/smoke) trained to the budget, then the report page from the ledger alone.
#include <gtest/gtest.h>

#include <set>

#include "attn_res/parameters.hpp"
#include "attn_res/units.hpp"
#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/core/run_dir.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"

namespace k3lab::experiments::attn_res {
namespace {

TEST(AttnResSmoke, TrainsEveryArmAndSeedToTheBudgetAndReports) {
  // The committed smoke run, proven equal to a fresh run of this build by ExperimentSmoke (tests/smoke).
  const auto run_dir = k3lab::testing::smoke_fixture_run("attn-res");
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/attn-res.json", &parameter_schema());
  const auto p = parse_parameters(protocol.parameters_for("smoke"));
  RunRecords records{core::read_manifest(run_dir), core::read_ledger(run_dir), run_dir};
  EXPECT_EQ(records.terminal_records().size(), 3 * p.seeds.size());
  for (const auto& r : records.terminal_records()) {
    ASSERT_EQ(r.at("kind"), "result") << r.dump();
    const auto& data = r.at("data");
    EXPECT_EQ(data.at("training").at("tokens").get<std::int64_t>(), p.token_budget);
    const auto& evaluations = data.at("training").at("evaluations");
    ASSERT_EQ(evaluations.size(), static_cast<std::size_t>(p.token_budget / p.eval_interval_tokens));
    for (const auto& e : evaluations) {
      EXPECT_EQ(e.at("probes").at("depth_attention").is_null(), data.at("arm") == "ordinary-residual");
      EXPECT_EQ(e.at("probes").at("gradient_norm_by_depth").at("sublayers").size(),
                static_cast<std::size_t>(2 * p.model.n_layers));
    }
  }
  report::Page page;
  make_experiment()->summarise(protocol, records, page);
  std::set<std::string> tables, charts;
  bool terminal_records = false;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table) {
      tables.insert(block.table.id);
      terminal_records = terminal_records || block.table.id.rfind("terminal-records", 0) == 0;
    }
    if (block.kind == report::Block::Kind::Chart) charts.insert(block.chart.id);
  }
  EXPECT_TRUE(terminal_records);
  for (const auto* id : {"validation-loss-by-seed", "paired-gain", "downstream", "downstream-paired", "engineering-constraints",
                         "block-vs-full", "depth-attention", "depth-attention-by-aggregation", "gradient-norm-by-depth"}) {
    EXPECT_TRUE(tables.count(id)) << id;
  }
  EXPECT_FALSE(tables.count("decision"));  // a smoke page reads no decision (docs/verdicts.md)
  for (const auto* id : {"validation-loss", "depth-attention-entropy", "gradient-norm-by-depth"}) {
    EXPECT_TRUE(charts.count(id)) << id;
  }
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Chart) {
      EXPECT_NO_THROW(report::chart_svg(block.chart)) << block.chart.id;
    }
    if (block.kind == report::Block::Kind::Table) {
      EXPECT_NO_THROW(report::table_markdown(block.table)) << block.table.id;
    }
  }
}

}  // namespace
}  // namespace k3lab::experiments::attn_res
