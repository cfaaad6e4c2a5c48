// The memory-pool experiment module: frozen ledger order (the v1 text; v2's stages are in
// protocol_v2_test.cpp), arm checks, one unit end to end, the retained-trace hash rule, and the summary
// page built from ledger records alone.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/memory_pool_experiment.hpp"

namespace k3lab::experiments {
namespace {

const std::filesystem::path kRoot = K3LAB_SOURCE_DIR;

core::Protocol protocol(const Experiment& e) {
  return core::load_protocol(kRoot / "experiments/memory-pool.json", &e.parameter_schema());
}

RunEnv env_for(const core::Protocol& p, const nlohmann::json& params, std::vector<nlohmann::json>* notes = nullptr) {
  RunEnv env{p, params, "smoke", std::filesystem::temp_directory_path(), std::filesystem::temp_directory_path(),
             false, nlohmann::json::object(), nullptr, nullptr, nullptr};
  env.note = [notes](const std::string&, nlohmann::json record) {
    if (notes) notes->push_back(std::move(record));
  };
  return env;
}

const Unit& find_unit(const std::vector<Unit>& units, const std::string& id) {
  for (const auto& u : units) {
    if (u.id == id) return u;
  }
  throw std::invalid_argument("no unit " + id);
}

TEST(MemoryPoolModule, FrozenLedgerOrderAndIds) {
  auto e = memory_pool::make_experiment();
  // Protocol v1's text (a fixed ratio, no tuning or sensitivity): only the decision units.
  const auto p =
      core::load_protocol(kRoot / "fixtures/memory-pool/protocol-v1/memory-pool.json", &e->parameter_schema());
  const auto full = e->enumerate(p, p.parameters_for("full"));
  EXPECT_EQ(full.size(), 3u * 21u * 3u);
  EXPECT_EQ(full[0].id, "mix=steady-short/trace=retained/policy=fixed-split");
  EXPECT_EQ(full[1].id, "mix=steady-short/trace=retained/policy=unified");
  EXPECT_EQ(full[2].id, "mix=steady-short/trace=retained/policy=padded-single-page");
  EXPECT_EQ(full[3].id, "mix=steady-short/trace=seeded-01/policy=fixed-split");
  EXPECT_EQ(full.back().id, "mix=shift-short-to-long/trace=seeded-20/policy=padded-single-page");
  EXPECT_EQ(full[3].spec["trace_seed"], sim::seed_hex(core::stream_seed(20260308, {0, 1})));
  const auto smoke = e->enumerate(p, p.parameters_for("smoke"));
  EXPECT_EQ(smoke.size(), 3u * 3u * 3u);
  EXPECT_EQ(e->enumerate(p, p.parameters_for("full")).back().id, full.back().id);  // deterministic
  const auto plan = e->plan_details(p, p.parameters_for("full"), full);
  EXPECT_EQ(plan["units"], 189);
  EXPECT_EQ(plan["sizes"]["state_bytes_per_request"], 28'085'760);
}

TEST(MemoryPoolModule, ArmsMustMatchPoliciesAndSayWhoAskedForThem) {
  auto e = memory_pool::make_experiment();
  auto p = protocol(*e);
  p.arms[2].requested_by_seed = true;  // the padded pool is k3lab's reference, not the seed's
  EXPECT_THROW(e->enumerate(p, p.parameters_for("smoke")), std::invalid_argument);
  p = protocol(*e);
  std::swap(p.arms[0], p.arms[1]);
  EXPECT_THROW(e->enumerate(p, p.parameters_for("smoke")), std::invalid_argument);
}

TEST(MemoryPoolModule, RunsASeededUnitDeterministically) {
  auto e = memory_pool::make_experiment();
  const auto p = protocol(*e);
  nlohmann::json params = p.parameters_for("smoke");
  params["arrivals_per_trace"] = 3000;
  const auto units = e->enumerate(p, params);
  const Unit* unit = nullptr;
  for (const auto& u : units) {
    if (u.id == "mix=shift-short-to-long/trace=seeded-01/policy=unified") unit = &u;
  }
  ASSERT_NE(unit, nullptr);
  auto env = env_for(p, params);
  const UnitOutcome a = e->run_unit(*unit, env);
  ASSERT_EQ(a.kind, UnitOutcome::Kind::Result) << a.detail;
  EXPECT_EQ(a.data["counts"]["arrivals"], 3000);
  EXPECT_EQ(a.data["trace"]["origin"], "generated");
  EXPECT_EQ(a.data["trace"]["label"], "seeded-01");
  EXPECT_EQ(a.data["policy_geometry"]["kind"], "unified");
  EXPECT_FALSE(a.data.contains("time_series"));  // only the retained trace keeps a time series
  auto fresh = memory_pool::make_experiment();      // no cached trace
  auto env2 = env_for(p, params);
  const UnitOutcome b = fresh->run_unit(*unit, env2);
  EXPECT_EQ(a.data.dump(), b.data.dump());
}

TEST(MemoryPoolModule, RetainedUnitChecksItsFixture) {
  auto e = memory_pool::make_experiment();
  const auto p = protocol(*e);
  nlohmann::json params = p.parameters_for("smoke");
  const auto units = e->enumerate(p, params);
  std::vector<nlohmann::json> notes;
  auto env = env_for(p, params, &notes);
  const Unit& retained = find_unit(units, "mix=steady-short/trace=retained/policy=unified");
  const UnitOutcome ok = e->run_unit(retained, env);
  ASSERT_EQ(ok.kind, UnitOutcome::Kind::Result) << ok.detail;
  EXPECT_EQ(ok.data["trace"]["origin"], "fixture");
  EXPECT_EQ(ok.data["trace"]["sha256"], params["retained_traces"][0]["sha256"]);
  EXPECT_TRUE(ok.data["trace"]["regenerated_matches"].get<bool>());
  EXPECT_TRUE(notes.empty());
  const auto& series = ok.data["time_series"];
  EXPECT_GE(series["t_seconds"].size(), 200u);
  EXPECT_LE(series["t_seconds"].size(), 602u);
  EXPECT_EQ(series["admitted"].size(), series["t_seconds"].size());

  params["retained_traces"][0]["sha256"] = std::string(64, 'b');
  auto tampered = memory_pool::make_experiment();
  auto env2 = env_for(p, params);
  const UnitOutcome bad = tampered->run_unit(retained, env2);
  EXPECT_EQ(bad.kind, UnitOutcome::Kind::Invalid);
  EXPECT_EQ(bad.reason, "retained-trace-hash-mismatch");
}

TEST(MemoryPoolModule, SummaryFromRecordsOnly) {
  auto e = memory_pool::make_experiment();
  const auto p = protocol(*e);
  nlohmann::json params = p.parameters_for("smoke");
  params["arrivals_per_trace"] = 2000;
  params["seeded_traces_per_mix"] = 3;
  RunRecords records;
  records.manifest = {{"profile", "smoke"}, {"parameters", params}};
  const auto units = e->enumerate(p, params);
  // The tuned fixed split reads its calibration results from the run's ledger.
  const k3lab::testing::TempDir run_dir("k3lab-memory-pool-summary");
  auto env = env_for(p, params);
  env.run_dir = run_dir.path();
  for (const auto& u : units) {
    if (u.spec.value("trace_index", 1) == 0) continue;  // the smoke fixtures hold 20,000 arrivals, not 2,000
    const UnitOutcome o = e->run_unit(u, env);
    ASSERT_EQ(o.kind, UnitOutcome::Kind::Result) << u.id << ": " << o.detail;
    const nlohmann::json record = {{"kind", "result"}, {"unit", u.id}, {"spec", u.spec}, {"data", o.data}};
    records.ledger.records.push_back(record);
    std::ofstream(run_dir.path() / "ledger.jsonl", std::ios::app) << record.dump() << "\n";
  }
  report::Page page;
  page.profile = "smoke";
  e->summarise(p, records, page);
  std::size_t tables = 0, charts = 0;
  const report::Table* decision = nullptr;
  bool boundary = false;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Table) {
      ++tables;
      if (block.table.id == "memory-pool-decision") decision = &block.table;
    }
    if (block.kind == report::Block::Kind::Chart) ++charts;
    if (block.kind == report::Block::Kind::Markdown &&
        block.markdown.find("cannot establish GPU throughput, copy cost, allocator-lock contention") != std::string::npos) {
      boundary = true;
    }
  }
  // The decision, one calibration table per mix, and one table per mix and policy; the sensitivity
  // sections need retained-trace results, which this ledger lacks.
  EXPECT_EQ(tables, 1u + 3u + 3u * 3u);
  EXPECT_EQ(charts, 0u);  // no retained trace in this ledger
  EXPECT_TRUE(boundary);
  ASSERT_NE(decision, nullptr);
  ASSERT_EQ(decision->rows.size(), 3u);
  EXPECT_EQ(std::get<std::int64_t>(decision->rows[2][1].value), 3);  // three pairs on the shift mix
  EXPECT_TRUE(std::holds_alternative<double>(decision->rows[2][2].value));  // the tuned ratio was chosen
  EXPECT_EQ(std::get<std::string>(decision->rows[2][9].value), "not evaluated (smoke)");
}

}  // namespace
}  // namespace k3lab::experiments
