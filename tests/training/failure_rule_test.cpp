// The failure rule (failure_rule.hpp, docs/verdicts.md), the decision gate and the smoke page's
// sizes, on hand-built terminal records whose classification, tally and verdict are worked out here.
#include <gtest/gtest.h>

#include "k3lab/experiments/training/failure_rule.hpp"
#include "k3lab/experiments/training/gate.hpp"
#include "k3lab/experiments/training/smoke_scale.hpp"

namespace k3lab::experiments::training {
namespace {

nlohmann::json record(const std::string& kind, const std::string& arm, std::uint64_t seed, const std::string& reason = "") {
  nlohmann::json r = {{"kind", kind}, {"unit", "arm=" + arm + "/seed=" + std::to_string(seed)},
                      {"spec", {{"arm", arm}, {"seed", seed}}}};
  if (!reason.empty()) r["reason"] = reason;
  return r;
}

const std::vector<std::string> kArms = {"t", "c"};

TEST(FailureRule, FailuresAndTimeoutsAreArmOutcomesInfrastructureIsTheOnlyExclusion) {
  auto tagged = record("failure", "c", 4, "exception");
  tagged["infrastructure"] = true;
  const std::vector<nlohmann::json> terminal = {
      record("result", "t", 1),          record("failure", "c", 1, "nan-loss"),
      record("invalid", "t", 2, "safety-timeout"), record("result", "c", 2),
      record("failure", "t", 3, "oom"),  record("failure", "c", 3, "oom"),  // the same in every arm
      record("result", "t", 4),          tagged,
      record("failure", "t", 5, "data-unavailable"), record("result", "c", 5)};
  const auto o = classify_runs(terminal, 10, kArms);
  EXPECT_TRUE(o.complete());
  ASSERT_EQ(o.exclusions.size(), 3u);
  // Record order: seed 4's tag and seed 5's predeclared reason are seen first, seed 3 after all records.
  EXPECT_EQ(o.exclusions[0].seed, 4u);
  EXPECT_EQ(o.exclusions[1].seed, 5u);
  EXPECT_NE(o.exclusions[1].reason.find("data-unavailable"), std::string::npos);
  EXPECT_EQ(o.exclusions[2].seed, 3u);
  EXPECT_EQ(o.exclusions[2].reason, "the same failure (oom) in every arm of the seed: shared infrastructure");
  EXPECT_FALSE(o.excluded(1));
  EXPECT_FALSE(o.excluded(2));
  ASSERT_EQ(o.failures_of("t").size(), 1u);  // the timeout on seed 2; seeds 3 and 5 are excluded
  EXPECT_EQ(o.failures_of("t")[0]->reason, "safety-timeout");
  ASSERT_EQ(o.failures_of("c").size(), 1u);  // the NaN on seed 1
  EXPECT_EQ(o.failures_of("c")[0]->seed, 1u);
}

TEST(FailureRule, DifferentFailuresOnOneSeedAreNotShared) {
  const auto o = classify_runs({record("failure", "t", 1, "nan-loss"), record("failure", "c", 1, "oom")}, 2, kArms);
  EXPECT_TRUE(o.exclusions.empty());
  const auto tally = tally_seeds(o, "t", {"c"});
  EXPECT_EQ(tally.lost_by_treatment, (std::vector<std::uint64_t>{1}));  // the treatment's failure counts first
  EXPECT_TRUE(tally.lost_by_control.empty());
}

TEST(FailureRule, AFailureInOnlySomeArmsOfASeedIsNotShared) {
  const std::vector<std::string> arms = {"a", "b", "t"};
  const auto o = classify_runs({record("failure", "a", 1, "oom"), record("failure", "t", 1, "oom"), record("result", "b", 1)},
                               3, arms);
  EXPECT_TRUE(o.exclusions.empty());
}

TEST(FailureRule, TheTallyCountsEachSeedOnceForTheArmThatLostIt) {
  const std::vector<nlohmann::json> terminal = {
      record("result", "t", 1), record("result", "c", 1), record("result", "k", 1),
      record("failure", "t", 2, "nan-loss"), record("result", "c", 2), record("result", "k", 2),
      record("result", "t", 3), record("result", "c", 3), record("failure", "k", 3, "oom"),
      record("result", "t", 4), record("result", "c", 4)};  // seed 4: k still open
  const auto o = classify_runs(terminal, 12, {"t", "c", "k"});
  EXPECT_FALSE(o.complete());
  EXPECT_EQ(o.partial(), "partial: 11 of 12 runs");
  const auto both = tally_seeds(o, "t", {"c", "k"});
  EXPECT_EQ(both.paired, (std::vector<std::uint64_t>{1}));
  EXPECT_EQ(both.lost_by_treatment, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(both.lost_by_control, (std::vector<std::uint64_t>{3}));  // seed 4 is open: in no list
  const auto one = tally_seeds(o, "t", {"c"});
  EXPECT_EQ(one.paired, (std::vector<std::uint64_t>{1, 3, 4}));
  EXPECT_TRUE(one.lost_by_control.empty());
}

SeedTally tally(std::vector<std::uint64_t> paired, std::vector<std::uint64_t> lost_t, std::vector<std::uint64_t> lost_c) {
  return {"t", {"c"}, std::move(paired), std::move(lost_t), std::move(lost_c)};
}

TEST(FailureRule, ATreatmentFailureRefusesTheClaimWhateverThePairsSay) {
  const auto t = tally({1, 2, 3, 4}, {5}, {});
  EXPECT_FALSE(t.claim_allowed());
  EXPECT_EQ(counted_verdict(t, "supported", "not supported"),
            "not supported: t failed on seed 5 (lost by t; a failure counts against its arm)");
}

TEST(FailureRule, AControlFailureLeavesTheRuleVerdictAndIsNamed) {
  const auto t = tally({1, 2}, {}, {3, 4});
  EXPECT_TRUE(t.claim_allowed());
  EXPECT_EQ(counted_verdict(t, "supported", "not supported"), "supported; c failed on seeds 3, 4 (lost by the control)");
  const SeedTally two{"t", {"c", "k"}, {1, 2}, {}, {3}};
  EXPECT_EQ(counted_verdict(two, "supported", "not supported"),
            "supported; a control (c, k) failed on seed 3 (lost by the control)");
}

TEST(FailureRule, FewerThanTwoPairsAreNotEvaluable) {
  const auto t = tally({1}, {}, {2, 3});
  EXPECT_FALSE(t.claim_allowed());
  EXPECT_EQ(counted_verdict(t, "", "not supported"),
            "not evaluable: 1 seed(s) with a result in every arm, two needed; c failed on seeds 2, 3 (lost by the control)");
  EXPECT_EQ(tally_rows(t)[2], (std::vector<std::string>{
                                  "seeds lost by c (a control failed, t completed: counts against the control)",
                                  "seeds 2, 3", "2"}));
}

TEST(FailureRule, ExcludedSeedsLeaveTheResultsAndAreListedWithTheirReason) {
  struct Run : RunIdentity {};
  ArmRuns<Run> runs;
  runs.by_arm["t"] = {Run{{"t", 1}}, Run{{"t", 2}}};
  runs.by_arm["c"] = {Run{{"c", 2}}};
  runs.by_arm["k"] = {Run{{"k", 1}}};
  auto tagged = record("failure", "c", 1, "exception");
  tagged["data"] = {{"infrastructure", true}};
  const auto o = classify_runs({record("result", "t", 1), tagged, record("result", "t", 2), record("result", "c", 2)}, 4, kArms);
  drop_excluded(runs, o);
  ASSERT_EQ(runs.by_arm.size(), 2u);  // k ran seed 1 only: gone
  ASSERT_EQ(runs.by_arm.at("t").size(), 1u);
  EXPECT_EQ(runs.by_arm.at("t")[0].seed, 2u);
  report::Page page;
  add_failure_rule(o, page);
  ASSERT_EQ(page.blocks.size(), 2u);
  EXPECT_EQ(page.blocks[1].table.id, "excluded-seeds");
  EXPECT_EQ(std::get<std::string>(page.blocks[1].table.rows[0][0].value), "1");
}

RunRecords records_with_manifest(nlohmann::json manifest) {
  RunRecords records;
  records.manifest = std::move(manifest);
  return records;
}

TEST(Gate, TheDecisionWaitsForEveryRunAndNeverShowsOnSmoke) {
  const auto partial = classify_runs({record("result", "t", 1), record("failure", "c", 1, "nan-loss")}, 4, kArms);
  const auto complete = classify_runs({record("result", "t", 1), record("failure", "c", 1, "nan-loss")}, 2, kArms);
  const core::Protocol protocol;
  report::Page page;
  EXPECT_FALSE(decision_readable(partial, protocol, records_with_manifest(nlohmann::json::object()), page));
  EXPECT_NE(page.blocks.back().markdown.find("not evaluated (partial: 2 of 4 runs"), std::string::npos);
  EXPECT_TRUE(decision_readable(complete, protocol, records_with_manifest({{"profile", "full"}}), page));
  EXPECT_FALSE(decision_readable(complete, protocol, records_with_manifest({{"profile", "smoke"}}), page));
  EXPECT_NE(page.blocks.back().markdown.find("not evaluated on the smoke profile"), std::string::npos);
  EXPECT_FALSE(decision_readable(classify_runs({}, 0, kArms), protocol, records_with_manifest(nlohmann::json::object()),
                                 page));  // no plan known
}

TEST(Gate, PartialLabelsEveryTableAndChartAfterTheFirstBlockUntilAllRunsEnded) {
  report::Page page;
  page.add_table(report::Table{"records", "Records", {}, {}, ""});
  page.add_text("text");
  page.add_table(report::Table{"means", "Means", {}, {}, ""});
  report::Chart chart;
  chart.title = "Loss";
  page.add_chart(chart);
  auto complete = page;
  label_partial(page, 1, 7, 9);
  EXPECT_EQ(page.blocks[0].table.title, "Records");
  EXPECT_EQ(page.blocks[2].table.title, "Means (partial: 7 of 9 runs)");
  EXPECT_EQ(page.blocks[3].chart.title, "Loss (partial: 7 of 9 runs)");
  label_partial(complete, 1, 9, 9);
  EXPECT_EQ(complete.blocks[2].table.title, "Means");
}

TEST(SmokeScale, SizesComeFromTheLedgerAndThePlan) {
  EXPECT_EQ(count_text(1234567.4), "1,234,567");
  EXPECT_EQ(count_text(512), "512");
  EXPECT_EQ(count_text(1000), "1,000");
  std::vector<Unit> units;
  for (std::uint64_t seed : {11u, 12u}) {
    for (const char* arm : {"a", "b"}) units.push_back({std::string(arm) + std::to_string(seed), {{"arm", arm}, {"seed", seed}}});
  }
  const nlohmann::json plan = {{"training_tokens_total", 2048.0}, {"estimate", {{"approximate_parameters", 28832.0}}}};
  const auto planned = run_scale(plan, units);
  EXPECT_EQ(planned.parameters, "28,832 approximate parameters (plan estimate)");
  EXPECT_DOUBLE_EQ(planned.tokens_per_run, 512.0);
  EXPECT_EQ(planned.seeds, (std::vector<std::uint64_t>{11, 12}));
  EXPECT_EQ(planned.runs, 4u);
  const std::vector<nlohmann::json> terminal = {{{"kind", "result"}, {"data", {{"parameters", 199808}}}},
                                                {{"kind", "result"}, {"data", {{"parameters", 199592}}}},
                                                {{"kind", "failure"}, {"data", {{"parameters", 5}}}}};
  const auto measured = run_scale(plan, units, terminal);
  EXPECT_EQ(measured.parameters, "199,592 to 199,808 trainable parameters (measured in the ledger)");
  const nlohmann::json full_plan = {{"training_tokens_total", 9e9}, {"parameters", {{"target", 120000000}}}};
  const auto full = run_scale(full_plan, units);
  EXPECT_EQ(full.parameters, "120,000,000 trainable parameters (the plan's target)");
  EXPECT_EQ(smoke_can_say("x", measured, full),
            "Only that the x code path runs end to end at the smoke profile's toy sizes: 199,592 to 199,808 trainable "
            "parameters (measured in the ledger) per model, about 512 training tokens per run, 4 runs over seeds 11, 12. "
            "The full profile plans 120,000,000 trainable parameters (the plan's target), about 2,250,000,000 "
            "training tokens per run and 4 runs.");
}

}  // namespace
}  // namespace k3lab::experiments::training
