// Protocol v2 of memory-pool: the four unit stages in order (and the v1 text still enumerating as
// before), the tuned split's choice against hand-made calibration records, the co-primary rule on
// hand-computed paired differences, a tuned decision unit reading its run's ledger, the sensitivity
// units' settings, and the v2 page.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/sim/calibration.hpp"
#include "k3lab/sim/parameters.hpp"
#include "memory_pool/decision.hpp"
#include "memory_pool/memory_pool_experiment.hpp"
#include "memory_pool/selection.hpp"
#include "memory_pool/sensitivity_section.hpp"
#include "memory_pool/units.hpp"

namespace k3lab::experiments {
namespace {

const std::filesystem::path kV2Root = K3LAB_SOURCE_DIR;

core::Protocol v2_protocol(const Experiment& e) {
  return core::load_protocol(kV2Root / "experiments/memory-pool.json", &e.parameter_schema());
}

RunEnv v2_env(const core::Protocol& p, const nlohmann::json& params, const std::filesystem::path& run_dir) {
  return RunEnv{p, params, "smoke", run_dir, run_dir, false, nlohmann::json::object(), nullptr, nullptr, nullptr};
}

void append_result(const std::filesystem::path& run_dir, const Unit& unit, const UnitOutcome& outcome) {
  std::ofstream out(run_dir / "ledger.jsonl", std::ios::app);
  out << nlohmann::json{{"kind", "result"}, {"unit", unit.id}, {"spec", unit.spec}, {"data", outcome.data}}.dump()
      << "\n";
}

const Unit& unit_named(const std::vector<Unit>& units, const std::string& id) {
  for (const auto& u : units) {
    if (u.id == id) return u;
  }
  throw std::invalid_argument("no unit " + id);
}

TEST(MemoryPoolV2, UnitsRunInFourStagesDerivedFromParameters) {
  auto e = memory_pool::make_experiment();
  const auto p = v2_protocol(*e);
  EXPECT_EQ(p.document.at("version"), 2);
  const auto full = e->enumerate(p, p.parameters_for("full"));
  // 3 mixes x (3 calibration traces x 9 ratios) + 189 decision + 3 x 9 ratio + 3 x 7 bandwidth units.
  ASSERT_EQ(full.size(), 81u + 189u + 27u + 21u);
  EXPECT_EQ(full[0].id, "stage=calibration/mix=steady-short/trace=calibration-01/ratio=0.05");
  EXPECT_EQ(full[8].id, "stage=calibration/mix=steady-short/trace=calibration-01/ratio=1.6");
  EXPECT_EQ(full[9].id, "stage=calibration/mix=steady-short/trace=calibration-02/ratio=0.05");
  EXPECT_EQ(full[80].id, "stage=calibration/mix=shift-short-to-long/trace=calibration-03/ratio=1.6");
  EXPECT_EQ(full[81].id, "mix=steady-short/trace=retained/policy=fixed-split");
  EXPECT_EQ(full[269].id, "mix=shift-short-to-long/trace=seeded-20/policy=padded-single-page");
  EXPECT_EQ(full[270].id, "stage=ratio-sensitivity/mix=steady-short/ratio=0.05");
  EXPECT_EQ(full[279].id, "stage=compaction-sensitivity/mix=steady-short/copy=1.92e12");
  EXPECT_EQ(full[285].id, "stage=compaction-sensitivity/mix=steady-short/copy=1.92e6");
  EXPECT_EQ(full[286].id, "stage=ratio-sensitivity/mix=bursty-mixed/ratio=0.05");
  EXPECT_EQ(full.back().id, "stage=compaction-sensitivity/mix=shift-short-to-long/copy=1.92e6");
  std::set<std::string> ids;
  for (const auto& u : full) ids.insert(u.id);
  EXPECT_EQ(ids.size(), full.size());
  const auto& calibration = full[10].spec;
  EXPECT_EQ(calibration["stage"], "calibration");
  EXPECT_EQ(calibration["trace_number"], 2);
  EXPECT_EQ(calibration["state_to_kv_ratio"], 0.1);
  EXPECT_EQ(calibration["arrivals"], 200000);
  const sim::SimParameters params = sim::parse_parameters(p.parameters_for("full"));
  EXPECT_EQ(calibration["trace_seed"], sim::seed_hex(core::stream_seed(20260308, {sim::kCalibrationStream, 0, 2})));
  EXPECT_EQ(full[279].spec["copy_bytes_per_second"], 1.92e12);
  EXPECT_EQ(full[279].spec["policy"], "unified");
  EXPECT_EQ(full[270].spec["trace_index"], 0);
  const auto plan = e->plan_details(p, p.parameters_for("full"), full);
  EXPECT_EQ(plan["units_by_stage"]["calibration"], 81);
  EXPECT_EQ(plan["units_by_stage"]["decision"], 189);
  // Smoke: 1 calibration trace x 3 ratios, 2 seeded traces, 2 bandwidths.
  EXPECT_EQ(e->enumerate(p, p.parameters_for("smoke")).size(), 9u + 27u + 9u + 6u);
}

TEST(MemoryPoolV2, TheV1TextStillEnumeratesItsDecisionUnits) {
  auto e = memory_pool::make_experiment();
  const auto v1 =
      core::load_protocol(kV2Root / "fixtures/memory-pool/protocol-v1/memory-pool.json", &e->parameter_schema());
  EXPECT_FALSE(v1.document.contains("version"));
  const auto v1_units = e->enumerate(v1, v1.parameters_for("full"));
  ASSERT_EQ(v1_units.size(), 189u);
  for (const auto& u : v1_units) EXPECT_FALSE(u.spec.contains("stage")) << u.id;
  // The v2 decision stage is the v1 ledger, id for id and spec for spec.
  const auto v2 = v2_protocol(*e);
  std::vector<std::string> v2_decision;
  for (const auto& u : e->enumerate(v2, v2.parameters_for("full"))) {
    if (memory_pool::stage_of(u.spec) == memory_pool::kStageDecision) v2_decision.push_back(u.id + " " + u.spec.dump());
  }
  std::vector<std::string> v1_all;
  for (const auto& u : v1_units) v1_all.push_back(u.id + " " + u.spec.dump());
  EXPECT_EQ(v2_decision, v1_all);
  const sim::SimParameters params = sim::parse_parameters(v1.parameters_for("full"));
  EXPECT_FALSE(params.policies[0].tuned_ratio);
  EXPECT_EQ(params.policies[0].state_to_kv_ratio, 0.9);
}

nlohmann::json calibration_data(double admitted, double mean_delay) {
  return {{"counts", {{"admitted_by_last_arrival", admitted}}}, {"queue_delay_seconds", {{"mean", mean_delay}}}};
}

// Ratios 0.2, 0.5, 0.9 and two calibration traces of mix steady-short.
sim::SimParameters two_trace_tuning() {
  auto e = memory_pool::make_experiment();
  nlohmann::json j = v2_protocol(*e).parameters_for("smoke");
  j["fixed_split_tuning"]["calibration_traces_per_mix"] = 2;
  return sim::parse_parameters(j);
}

std::map<std::string, nlohmann::json> hand_records(const std::vector<std::array<double, 4>>& rows) {
  // rows: ratio index 0..2 -> {admitted trace 1, admitted trace 2, delay trace 1, delay trace 2}
  const double ratios[] = {0.2, 0.5, 0.9};
  std::map<std::string, nlohmann::json> out;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out[memory_pool::calibration_unit_id("steady-short", 1, ratios[r])] = calibration_data(rows[r][0], rows[r][2]);
    out[memory_pool::calibration_unit_id("steady-short", 2, ratios[r])] = calibration_data(rows[r][1], rows[r][3]);
  }
  return out;
}

TEST(MemoryPoolV2, TheSplitIsChosenByAdmissionsThenDelayThenTheSmallerRatio) {
  const sim::SimParameters p = two_trace_tuning();
  // Sums 190, 195, 190: 0.5 wins outright although its delay is the worst.
  auto choice = memory_pool::choose_split_ratio(p, "steady-short",
                                                hand_records({{{100, 90, 1, 1}}, {{100, 95, 9, 9}}, {{95, 95, 1, 1}}}));
  ASSERT_TRUE(choice.chosen);
  EXPECT_EQ(choice.ratio, 0.5);
  EXPECT_EQ(choice.rows[1].admitted_sum, 195);
  // 0.2 and 0.9 tie at 196; mean delays (1 + 3)/2 = 2 against (2.5 + 1)/2 = 1.75: the larger ratio wins.
  choice = memory_pool::choose_split_ratio(p, "steady-short",
                                           hand_records({{{100, 96, 1, 3}}, {{100, 95, 0, 0}}, {{98, 98, 2.5, 1}}}));
  ASSERT_TRUE(choice.chosen);
  EXPECT_EQ(choice.ratio, 0.9);
  EXPECT_DOUBLE_EQ(choice.rows[0].queue_delay_mean_seconds, 2.0);
  EXPECT_DOUBLE_EQ(choice.rows[2].queue_delay_mean_seconds, 1.75);
  // The same tie with the delays the other way round: the smaller ratio wins on delay.
  choice = memory_pool::choose_split_ratio(p, "steady-short",
                                           hand_records({{{100, 96, 2.5, 1}}, {{100, 95, 0, 0}}, {{98, 98, 1, 3}}}));
  EXPECT_EQ(choice.ratio, 0.2);
  // Equal on both: the smaller ratio.
  choice = memory_pool::choose_split_ratio(p, "steady-short",
                                           hand_records({{{1, 1, 1, 1}}, {{1, 1, 1, 1}}, {{1, 1, 1, 1}}}));
  EXPECT_EQ(choice.ratio, 0.2);
  EXPECT_EQ(choice.to_json()["state_to_kv_ratio"], 0.2);
  // One calibration result missing: no choice, and the missing unit is named.
  auto records = hand_records({{{100, 90, 1, 1}}, {{100, 95, 9, 9}}, {{95, 95, 1, 1}}});
  records.erase(memory_pool::calibration_unit_id("steady-short", 2, 0.9));
  choice = memory_pool::choose_split_ratio(p, "steady-short", records);
  EXPECT_FALSE(choice.chosen);
  ASSERT_EQ(choice.missing.size(), 1u);
  EXPECT_EQ(choice.missing[0], "stage=calibration/mix=steady-short/trace=calibration-02/ratio=0.9");
  EXPECT_FALSE(choice.to_json().contains("state_to_kv_ratio"));
  // Another mix's records do not count.
  EXPECT_FALSE(
      memory_pool::choose_split_ratio(p, "bursty-mixed", hand_records({{{1, 1, 1, 1}}, {{1, 1, 1, 1}}, {{1, 1, 1, 1}}}))
          .chosen);
}

TEST(MemoryPoolV2, CoPrimaryRuleOnHandComputedPairs) {
  using memory_pool::CoPrimaryVerdict;
  // {10, 11, 12}: mean 11, s = 1, t(0.975, 2) = 4.302653, half width 2.484138: [8.516, 13.484], above zero.
  const std::vector<double> above = {10, 11, 12};
  const std::vector<double> around = {-1, 0, 1};  // mean 0: contains zero
  const std::vector<double> below = {-10, -11, -12};
  auto d = memory_pool::decide(above, around);
  EXPECT_NEAR(d.admit.low, 11 - 4.302653 / std::sqrt(3.0), 1e-5);
  EXPECT_NEAR(d.admit.high, 11 + 4.302653 / std::sqrt(3.0), 1e-5);
  EXPECT_EQ(d.verdict, CoPrimaryVerdict::Supported);
  EXPECT_EQ(memory_pool::decide(around, above).verdict, CoPrimaryVerdict::Supported);  // delay alone suffices
  EXPECT_EQ(memory_pool::decide(above, above).verdict, CoPrimaryVerdict::Supported);
  EXPECT_EQ(memory_pool::decide(below, around).verdict, CoPrimaryVerdict::Refuted);
  EXPECT_EQ(memory_pool::decide(around, below).verdict, CoPrimaryVerdict::Refuted);
  EXPECT_EQ(memory_pool::decide(above, below).verdict, CoPrimaryVerdict::TradeOff);
  EXPECT_EQ(memory_pool::decide(below, above).verdict, CoPrimaryVerdict::TradeOff);
  EXPECT_EQ(memory_pool::decide(around, around).verdict, CoPrimaryVerdict::Unresolved);
  // {1, 2, 3}: mean 2, low 2 - 2.484 < 0: not above although every difference is positive.
  EXPECT_EQ(memory_pool::decide({1, 2, 3}, around).verdict, CoPrimaryVerdict::Unresolved);
  EXPECT_EQ(memory_pool::decide({5}, {5}).verdict, CoPrimaryVerdict::NotEnoughPairs);
  EXPECT_THROW(memory_pool::decide({1, 2}, {1}), std::invalid_argument);
  EXPECT_EQ(memory_pool::verdict_text(CoPrimaryVerdict::TradeOff).rfind("unresolved (trade-off", 0), 0u);
}

TEST(MemoryPoolV2, ATunedDecisionUnitReadsItsRatioFromTheLedger) {
  auto e = memory_pool::make_experiment();
  const auto p = v2_protocol(*e);
  nlohmann::json params = p.parameters_for("smoke");
  params["arrivals_per_trace"] = 2000;
  const auto units = e->enumerate(p, params);
  const Unit& decision = unit_named(units, "mix=steady-short/trace=seeded-01/policy=fixed-split");

  // The calibration units, run and recorded in a ledger.
  const k3lab::testing::TempDir run_dir("k3lab-memory-pool-v2-ledger");
  auto env = v2_env(p, params, run_dir.path());
  std::vector<std::tuple<double, double, double>> keys;  // (-admitted, mean delay, ratio): smallest wins
  std::map<double, nlohmann::json> calibration;
  for (double ratio : {0.2, 0.5, 0.9}) {
    const Unit& u = unit_named(units, memory_pool::calibration_unit_id("steady-short", 1, ratio));
    const UnitOutcome o = e->run_unit(u, env);
    ASSERT_EQ(o.kind, UnitOutcome::Kind::Result) << o.detail;
    EXPECT_EQ(o.data["trace"]["origin"], "generated-pre-shift");
    EXPECT_EQ(o.data["trace"]["arrivals"], 2000);
    EXPECT_EQ(o.data["trace"]["generator_seed"], u.spec["trace_seed"]);
    EXPECT_EQ(o.data["state_to_kv_ratio"], ratio);
    keys.emplace_back(-o.data["counts"]["admitted_by_last_arrival"].get<double>(),
                      o.data["queue_delay_seconds"]["mean"].get<double>(), ratio);
    calibration[ratio] = o.data;
    append_result(run_dir.path(), u, o);
  }
  auto fresh = memory_pool::make_experiment();
  const UnitOutcome after = fresh->run_unit(decision, env);
  ASSERT_EQ(after.kind, UnitOutcome::Kind::Result) << after.detail;
  EXPECT_EQ(after.timing["calibration_units_recomputed"], 0);
  const auto& chosen_by = after.data["chosen_by"];
  ASSERT_EQ(chosen_by["calibration"].size(), 3u);
  // One calibration trace: the rule is the lexicographic minimum of the keys.
  const double ratio = after.data["state_to_kv_ratio"].get<double>();
  EXPECT_EQ(ratio, std::get<2>(*std::min_element(keys.begin(), keys.end())));
  EXPECT_EQ(chosen_by["state_to_kv_ratio"], ratio);
  const sim::SimParameters sp = sim::parse_parameters(params);
  EXPECT_EQ(after.data["policy_geometry"]["state_slots"],
            sim::policy_config(sp, sim::with_ratio(sp.policies[0], ratio)).fixed.state_slots);

  // No ledger (another worker has not run the calibration yet): the unit runs the calibration itself and
  // records exactly the same data.
  const k3lab::testing::TempDir empty_dir("k3lab-memory-pool-v2-no-ledger");
  auto empty_env = v2_env(p, params, empty_dir.path());
  const UnitOutcome alone = memory_pool::make_experiment()->run_unit(decision, empty_env);
  ASSERT_EQ(alone.kind, UnitOutcome::Kind::Result) << alone.detail;
  EXPECT_EQ(alone.timing["calibration_units_recomputed"], 3);
  EXPECT_EQ(alone.data.dump(), after.data.dump());

  // The ledger is what is read: a recorded calibration result that makes ratio 0.5 the best wins, and the
  // one result left out is recomputed.
  const k3lab::testing::TempDir edited_dir("k3lab-memory-pool-v2-edited");
  nlohmann::json best = calibration[0.5];
  best["counts"]["admitted_by_last_arrival"] = 1'000'000;
  append_result(edited_dir.path(), unit_named(units, memory_pool::calibration_unit_id("steady-short", 1, 0.5)),
                UnitOutcome::result(best));
  append_result(edited_dir.path(), unit_named(units, memory_pool::calibration_unit_id("steady-short", 1, 0.9)),
                UnitOutcome::result(calibration[0.9]));
  auto edited_env = v2_env(p, params, edited_dir.path());
  const UnitOutcome edited = memory_pool::make_experiment()->run_unit(decision, edited_env);
  ASSERT_EQ(edited.kind, UnitOutcome::Kind::Result) << edited.detail;
  EXPECT_EQ(edited.data["state_to_kv_ratio"], 0.5);
  EXPECT_EQ(edited.timing["calibration_units_recomputed"], 1);

  // The unified arm is not tuned and needs no ledger.
  const UnitOutcome unified =
      fresh->run_unit(unit_named(units, "mix=steady-short/trace=seeded-01/policy=unified"), env);
  ASSERT_EQ(unified.kind, UnitOutcome::Kind::Result) << unified.detail;
  EXPECT_FALSE(unified.data.contains("state_to_kv_ratio"));
}

TEST(MemoryPoolV2, SensitivityUnitsUseTheirSetting) {
  const k3lab::testing::TempDir run_dir("k3lab-memory-pool-v2-sensitivity");
  auto e = memory_pool::make_experiment();
  const auto p = v2_protocol(*e);
  const nlohmann::json params = p.parameters_for("smoke");
  const auto units = e->enumerate(p, params);
  auto env = v2_env(p, params, run_dir.path());
  std::vector<nlohmann::json> runs;
  for (double bandwidth : {1.92e12, 1.92e8}) {
    const UnitOutcome o = e->run_unit(
        unit_named(units, memory_pool::compaction_sensitivity_unit_id("shift-short-to-long", bandwidth)), env);
    ASSERT_EQ(o.kind, UnitOutcome::Kind::Result) << o.detail;
    EXPECT_EQ(o.data["copy_bytes_per_second"], bandwidth);
    EXPECT_EQ(o.data["trace"]["origin"], "fixture");
    EXPECT_FALSE(o.data.contains("time_series"));
    // The copy time is this bandwidth's: bytes / bandwidth, rounded up to a microsecond per moving iteration.
    const double moved = o.data["compaction"]["bytes_moved"].get<double>();
    const double stall_us = o.data["compaction"]["stall_seconds"].get<double>() * 1e6;
    EXPECT_GE(stall_us + 1e-6, moved * 1e6 / bandwidth);
    EXPECT_LE(stall_us, moved * 1e6 / bandwidth + o.data["compaction"]["moves"].get<double>() + 1e-6);
    runs.push_back(o.data);
  }
  EXPECT_GT(runs[0]["compaction"]["bytes_moved"].get<double>(), 0.0) << "the smoke shift trace must compact";
  const UnitOutcome ratio =
      e->run_unit(unit_named(units, memory_pool::ratio_sensitivity_unit_id("bursty-mixed", 0.5)), env);
  ASSERT_EQ(ratio.kind, UnitOutcome::Kind::Result) << ratio.detail;
  EXPECT_EQ(ratio.data["state_to_kv_ratio"], 0.5);
  EXPECT_EQ(ratio.data["policy_geometry"]["kind"], "fixed-split");
  const sim::SimParameters sp = sim::parse_parameters(params);
  EXPECT_EQ(ratio.data["policy_geometry"]["kv_pages"],
            sim::policy_config(sp, sim::with_ratio(sp.policies[0], 0.5)).fixed.kv_pages);
}

TEST(MemoryPoolV2, TheGainIsGoneAtTheHighestBandwidthWithoutIt) {
  EXPECT_EQ(memory_pool::highest_bandwidth_without_gain({{1e12, 5}, {1e10, 0}, {1e8, -3}}), 1e10);
  EXPECT_EQ(memory_pool::highest_bandwidth_without_gain({{1e8, -3}, {1e12, 5}, {1e10, -1}}), 1e10);
  EXPECT_EQ(memory_pool::highest_bandwidth_without_gain({{1e12, 5}, {1e10, 2}}), std::nullopt);
  EXPECT_EQ(memory_pool::highest_bandwidth_without_gain({{1e12, -1}, {1e10, 2}}), 1e12);  // not monotone: the highest
}

TEST(MemoryPoolV2, ThePageNamesTheChosenSplitAndTheTieBreakThatChoseIt) {
  auto e = memory_pool::make_experiment();
  const auto p = v2_protocol(*e);
  const nlohmann::json params = p.parameters_for("smoke");  // ratios 0.2, 0.5, 0.9; one calibration trace
  // steady-short: 0.5 and 0.9 tie on admissions, 0.9 waits less; bursty-mixed: 0.2 outright;
  // shift-short-to-long: all three tie on both, so the smaller ratio decides.
  const std::map<std::string, std::vector<std::array<double, 2>>> hand = {
      {"steady-short", {{{90, 1.0}}, {{100, 0.5}}, {{100, 0.25}}}},
      {"bursty-mixed", {{{100, 9.0}}, {{99, 0.5}}, {{98, 0.5}}}},
      {"shift-short-to-long", {{{100, 0.5}}, {{100, 0.5}}, {{100, 0.5}}}}};
  RunRecords records;
  records.manifest = {{"profile", "smoke"}, {"parameters", params}};
  const double ratios[] = {0.2, 0.5, 0.9};
  for (const auto& [mix, rows] : hand) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      records.ledger.records.push_back(
          {{"kind", "result"},
           {"unit", memory_pool::calibration_unit_id(mix, 1, ratios[r])},
           {"spec", {{"stage", "calibration"}, {"mix", mix}, {"state_to_kv_ratio", ratios[r]}}},
           {"data", calibration_data(rows[r][0], rows[r][1])}});
    }
  }
  report::Page page;
  page.profile = "smoke";
  e->summarise(p, records, page);
  std::string text;
  std::size_t calibration_tables = 0;
  for (const auto& block : page.blocks) {
    if (block.kind == report::Block::Kind::Markdown) text += block.markdown;
    if (block.kind == report::Block::Kind::Table && block.table.id.find("-calibration") != std::string::npos) {
      ++calibration_tables;
    }
  }
  EXPECT_EQ(calibration_tables, 3u);
  EXPECT_NE(text.find("**steady-short**: state:KV ratio 0.9: tied on admissions with ratio 0.5; the lower mean queue "
                      "delay decided, by 0.25 s or more."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("**bursty-mixed**: state:KV ratio 0.2: the highest admissions outright."), std::string::npos);
  EXPECT_NE(text.find("**shift-short-to-long**: state:KV ratio 0.2: tied on admissions with ratios 0.5, 0.9, then on "
                      "mean queue delay; the smaller ratio decided."),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace k3lab::experiments
