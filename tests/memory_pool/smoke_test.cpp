// End to end through the generic runner: the smoke profile of memory-pool, then its report page.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/files.hpp"
#include "common/temp_dir.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/report_builder.hpp"
#include "k3lab/experiments/runner.hpp"
#include "k3lab/report/page.hpp"
#include "memory_pool/memory_pool_experiment.hpp"

namespace k3lab::experiments {
namespace {

// The catalog of a report built from this module alone.
experiments::Catalog one_module_catalog() {
  return {{"memory-pool"}, [](const std::string&) { return memory_pool::make_experiment(); }};
}

TEST(MemoryPoolSmoke, RunsTheSmokeProfileAndRendersItsPage) {
  const k3lab::testing::TempDir tmp("k3lab-memory-pool-smoke");
  const auto runs = tmp.path();
  RunRequest request;
  request.experiment_id = "memory-pool";
  request.profile = "smoke";
  request.runs_root = runs;
  request.unfrozen = true;
  request.fresh = true;
  request.experiment_factory = [] { return memory_pool::make_experiment(); };
  request.protocol_file = k3lab::testing::source_dir() / "experiments/memory-pool.json";
  const RunSummary summary = run_experiment(request);
  ASSERT_EQ(summary.exit_code, kExitOk) << summary.message;
  // 9 calibration, 27 decision, 9 ratio-sensitivity and 6 compaction-sensitivity units.
  EXPECT_EQ(summary.planned, 51u);
  EXPECT_EQ(summary.results, 51u);
  EXPECT_EQ(summary.invalid + summary.failures, 0u);

  // Same command, same ledger apart from timings and timestamps.
  const auto first = core::read_ledger(summary.run_dir);
  RunRequest again = request;
  again.runs_root = runs / "again";
  const RunSummary second_summary = run_experiment(again);
  ASSERT_EQ(second_summary.exit_code, kExitOk) << second_summary.message;
  const auto second = core::read_ledger(second_summary.run_dir);
  std::vector<std::string> a, b;
  for (const auto& r : first.records) {
    if (r.value("kind", "") == "result") a.push_back(core::deterministic_part(r).dump());
  }
  for (const auto& r : second.records) {
    if (r.value("kind", "") == "result") b.push_back(core::deterministic_part(r).dump());
  }
  EXPECT_EQ(a, b);

  const report::Page page = build_page(summary.run_dir, runs, one_module_catalog());
  std::size_t charts = 0;
  for (const auto& block : page.blocks) charts += block.kind == report::Block::Kind::Chart;
  // Per mix: three for the retained trace, two for the ratio sensitivity, one for the compaction bandwidth.
  EXPECT_EQ(charts, 3u * (3u + 2u + 1u));
  const auto folder = report::render_page(page, runs / "report");
  EXPECT_TRUE(std::filesystem::exists(folder / "index.md"));
  EXPECT_TRUE(std::filesystem::exists(folder / "tables" / "memory-pool-decision.csv"));
}

}  // namespace
}  // namespace k3lab::experiments
