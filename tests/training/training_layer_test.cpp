// The shared layer of the proxy-training experiments (src/experiments/training): the parameter binder
// against a toy block, the arm x seed design, the GPU-hour estimate and the page tables, each against
// hand-computed values (the failure rule and the gate: failure_rule_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "k3lab/experiments/training/arm_runs.hpp"
#include "k3lab/experiments/training/design.hpp"
#include "k3lab/experiments/training/page_tables.hpp"
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/experiments/training/plan_estimate.hpp"

namespace k3lab::experiments::training {
namespace {

struct Toy : Seeds, DataSource, TokenSchedule {
  DenseModel model;
  double ratio = 0;
};

void declare_toy(Fields<Toy>& f) {
  f.part(declare_seeds, "toy seeds");
  f.object("model", "toy shape", &Toy::model,
           [](Fields<DenseModel>& m) { declare_dense_model(m, {.n_layers = "toy layers"}, "toy ffn"); });
  f.part(declare_data, {});
  f.part(declare_token_schedule, {});
  f.group("extra", "a nested object read into Toy itself",
          [](Fields<Toy>& e) { e.number("ratio", "a ratio", &Toy::ratio).above(0); });
}

void check_toy(const Toy& p, Issues& issues) {
  check_seeds(p.seeds, "parameters.seeds", true, issues);
  check_token_schedule(p, issues);
}

nlohmann::json toy_json() {
  return {{"seeds", {3, 5}},
          {"model", {{"vocab_size", 256}, {"d_model", 32}, {"n_layers", 2}, {"n_heads", 4}, {"head_dim", 8}, {"ffn_hidden", 64}}},
          {"data", {{"dataset", "builtin-tiny"}, {"tokenizer", "byte"}, {"order_seed", 7}}},
          {"token_budget", 4096},
          {"batch_tokens", 256},
          {"sequence_length", 64},
          {"eval_interval_tokens", 1024},
          {"validation_tokens", 128},
          {"extra", {{"ratio", 0.5}}}};
}

const ParameterSet<Toy>& toy_set() { return parameter_set_of<Toy>("toy", declare_toy, check_toy); }

std::string issues_of(const nlohmann::json& j) {
  try {
    toy_set().parse(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(Fields, SchemaListsTheFieldsInDeclarationOrderAndParseFillsEveryMember) {
  std::vector<std::string> names;
  for (const auto& field : toy_set().schema().fields()) names.push_back(field.name);
  EXPECT_EQ(names, (std::vector<std::string>{"seeds", "model", "data", "token_budget", "batch_tokens", "sequence_length",
                                             "micro_batch_rows", "activation_checkpointing", "eval_interval_tokens",
                                             "validation_tokens", "extra"}));
  const auto p = toy_set().parse(toy_json());
  EXPECT_EQ(p.seeds, (std::vector<std::uint64_t>{3, 5}));
  EXPECT_EQ(p.model.vocab_size, 256);
  EXPECT_EQ(p.model.n_heads, 4);
  EXPECT_EQ(p.model.ffn_hidden, 64);
  EXPECT_EQ(p.dataset, "builtin-tiny");
  EXPECT_EQ(p.tokenizer, "byte");
  EXPECT_EQ(p.data_order_seed, 7u);
  EXPECT_EQ(p.token_budget, 4096);
  EXPECT_EQ(p.validation_tokens, 128);
  EXPECT_DOUBLE_EQ(p.ratio, 0.5);
}

TEST(Fields, SchemaErrorsNameTheFieldAndRulesRunOnlyOnAValidSchema) {
  auto j = toy_json();
  j["extra"]["ratio"] = -1;
  j["batch_tokens"] = 100;  // also breaks a rule, which is not reported while the schema fails
  const auto message = issues_of(j);
  EXPECT_NE(message.find("toy parameters are invalid"), std::string::npos) << message;
  EXPECT_NE(message.find("parameters.extra.ratio"), std::string::npos) << message;
  EXPECT_EQ(message.find("parameters.batch_tokens"), std::string::npos) << message;
}

TEST(Rules, SeedsAndTheTokenScheduleAreChecked) {
  auto j = toy_json();
  j["seeds"] = {3, 3};
  j["batch_tokens"] = 200;        // not whole sequences of 64
  j["eval_interval_tokens"] = 1100;  // not whole 200-token steps, and 4096 is no multiple of it
  const auto message = issues_of(j);
  for (const char* path : {"parameters.seeds", "parameters.batch_tokens", "parameters.eval_interval_tokens",
                           "parameters.token_budget"}) {
    EXPECT_NE(message.find(path), std::string::npos) << path << "\n" << message;
  }
  EXPECT_EQ(message.find("parameters.validation_tokens"), std::string::npos) << message;
  j = toy_json();
  j["seeds"] = {3};
  EXPECT_NE(issues_of(j).find("needs at least 2 seeds"), std::string::npos);
}

TEST(Design, UnitsGoSeedBySeedWithTheArmsInOrder) {
  const auto units = arm_by_seed_units({"a", "b"}, {11, 7}, [](const std::string& arm) {
    return nlohmann::json{{"tag", arm + "!"}};
  });
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0].id, "arm=a/seed=11");
  EXPECT_EQ(units[1].id, "arm=b/seed=11");
  EXPECT_EQ(units[2].id, "arm=a/seed=7");
  EXPECT_EQ(units[3].spec, (nlohmann::json{{"arm", "b"}, {"seed", 7}, {"seed_index", 2}, {"tag", "b!"}}));
}

TEST(Design, ArmsMustMatchTheProtocolExactly) {
  std::vector<core::Arm> declared(2);
  declared[0].id = "b";
  declared[1].id = "a";
  EXPECT_NO_THROW(require_arms("toy", declared, {"a", "b"}));
  declared[1].id = "c";
  try {
    require_arms("toy", declared, {"a", "b"});
    FAIL() << "a protocol with arm c was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "toy: arms must be exactly {a, b}; found {b, c}");
  }
}

TEST(PlanEstimate, SixNDAtFortyPercentOfTheMeasuredPeak) {
  // 6 x 1e8 x 1e9 = 6e17 FLOP; 40% of 795e12 is 318e12 FLOP/s; 6e17 / 318e12 = 1886.792... s.
  const auto g = gpu_hours(1e8, 1e9);
  EXPECT_DOUBLE_EQ(g.flops, 6e17);
  EXPECT_NEAR(g.gpu_hours, 1886.7924528301887 / 3600.0, 1e-12);
  EXPECT_EQ(estimate_basis("counted", "rest"),
            "counted at 40% of the 795 TFLOP/s bf16 matmul rate measured on one H200; rest");
  const auto e = per_run_estimate({.parameters_key = "n", .parameters = 1e8, .tokens_per_run = 1e9, .not_counted = "x"}, 3);
  EXPECT_DOUBLE_EQ(e.at("n").get<double>(), 1e8);
  EXPECT_NEAR(e.at("gpu_hours_total").get<double>(), 3 * 1886.7924528301887 / 3600.0, 1e-12);
}

// An arm's memory plan as the plan details carry it: 8 GB in all, of which parameters 1, gradients 1,
// optimizer state 2, activations 3 and the largest transient 1.
nlohmann::json plan_with_one_arm() {
  const nlohmann::json memory = {{"micro_batch_rows", 1},
                                 {"sequence_length", 8000},
                                 {"parameters_bytes", 1'000'000'000},
                                 {"gradients_bytes", 1'000'000'000},
                                 {"optimizer_state_bytes", 2'000'000'000},
                                 {"activation_bytes", 3'000'000'000},
                                 {"transients", {{"logits", 1'000'000'000}, {"attention backward", 500'000'000}}},
                                 {"largest_transient", "logits"},
                                 {"total_bytes", 8'000'000'000}};
  return {{"gpu_hours_by_arm", nlohmann::json::array({{{"arm", "hybrid"}, {"memory", memory}}})}};
}

// Each lane beyond the first holds its own activations and transient (4 GB), and with lanes every
// lane's gradients are kept apart (1 GB each): 8 + 4 + 2 = 14 GB at two lanes, 8 + 8 + 3 = 19 at three.
TEST(PlanEstimate, MicroBatchesSideBySideCountEachLanesActivationsAndGradients) {
  const auto plan = plan_with_one_arm();
  const auto one_lane = [](std::int64_t) { return 1; };
  const auto two_lanes = [](std::int64_t) { return 2; };
  const auto three_lanes = [](std::int64_t) { return 3; };
  EXPECT_FALSE(memory_refusal(plan, 8.9e9, "RAM", one_lane).has_value());  // 8 GB <= 90% of 8.9
  EXPECT_FALSE(memory_refusal(plan, 14e9 / kMemoryHeadroom, "RAM", two_lanes).has_value());
  const auto refused = memory_refusal(plan, 14e9 / kMemoryHeadroom - 1e6, "RAM", two_lanes);
  ASSERT_TRUE(refused.has_value());
  EXPECT_NE(refused->find("needs an estimated 14.0 GB"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("(2 micro-batches side by side, one per thread)"), std::string::npos) << *refused;
  EXPECT_NE(refused->find("or with fewer --threads"), std::string::npos) << *refused;
  EXPECT_FALSE(memory_refusal(plan, 19e9 / kMemoryHeadroom, "RAM", three_lanes).has_value());
  EXPECT_TRUE(memory_refusal(plan, 19e9 / kMemoryHeadroom - 1e6, "RAM", three_lanes).has_value());
  const auto alone = memory_refusal(plan, 8e9, "RAM", one_lane);
  ASSERT_TRUE(alone.has_value());
  EXPECT_EQ(alone->find("side by side"), std::string::npos) << *alone;
  EXPECT_EQ(alone->find("--threads"), std::string::npos) << *alone;
}

TEST(PageTables, PairedComparisonsWaitForTwoPairs) {
  report::Page page;
  EXPECT_TRUE(too_few_pairs(1, "seeds in both arms", page));
  ASSERT_EQ(page.blocks.size(), 1u);
  EXPECT_EQ(page.blocks[0].markdown, "Paired comparisons need at least two seeds in both arms; 1 so far.");
  EXPECT_FALSE(too_few_pairs(2, "seeds in both arms", page));
  EXPECT_EQ(page.blocks.size(), 1u);
}

struct ToyRun : RunIdentity {
  double value = 0;
  std::vector<std::pair<std::int64_t, double>> curve;
};

TEST(PageTables, ArmMeansSkipMissingAndNonFiniteValues) {
  std::map<std::string, std::vector<ToyRun>> by_arm;
  by_arm["a"] = {{{"a", 1}, 1.0, {}}, {{"a", 2}, 2.0, {}}, {{"a", 3}, std::numeric_limits<double>::quiet_NaN(), {}}};
  const std::vector<ArmMetric<ToyRun>> metrics = {{"value", [](const ToyRun& r) { return std::optional<double>(r.value); }}};
  const auto table = arm_mean_table("t", "T", {"a", "b"}, by_arm, metrics, true);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"metric", "a mean", "a 95% CI", "a n", "b mean", "b 95% CI", "b n"}));
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(std::get<double>(table.rows[0][1].value), 1.5);
  EXPECT_EQ(std::get<std::int64_t>(table.rows[0][3].value), 2);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(table.rows[0][4].value));  // arm b has no run
  EXPECT_EQ(std::get<std::int64_t>(table.rows[0][6].value), 0);
}

TEST(PageTables, SeedMeanCurvesAverageTheRunsThatHaveEachPoint) {
  const auto s = seed_mean_series("arm", std::vector<Curve>{{{10, 1.0}, {20, 3.0}}, {{10, 2.0}}});
  EXPECT_EQ(s.x, (std::vector<double>{10, 20}));
  EXPECT_EQ(s.y, (std::vector<double>{1.5, 3.0}));
  std::map<std::string, std::vector<ToyRun>> by_arm;
  by_arm["b"] = {{{"b", 1}, 0, {{5, 4.0}}}, {{"b", 2}, 0, {{5, 6.0}}}};
  report::Chart chart;
  add_arm_curves(chart, {"a", "b"}, by_arm, &ToyRun::curve);
  ASSERT_EQ(chart.series.size(), 1u);  // arm a has no runs
  EXPECT_EQ(chart.series[0].label, "b");
  EXPECT_EQ(chart.series[0].y, (std::vector<double>{5.0}));
}

TEST(ArmRuns, ResultsGroupByArmFailuresCountAndPairsShareASeed) {
  auto result = [](const std::string& arm, std::uint64_t seed, double v) {
    return nlohmann::json{{"kind", "result"}, {"data", {{"arm", arm}, {"seed", seed}, {"v", v}}}};
  };
  const std::vector<nlohmann::json> terminal = {result("t", 1, 1.0), result("c", 2, 2.0), result("c", 1, 3.0),
                                                {{"kind", "failure"}, {"data", {{"arm", "t"}}}}, result("t", 3, 4.0)};
  const auto runs = group_by_arm<ToyRun>(terminal, [](const nlohmann::json& record) -> std::optional<ToyRun> {
    ToyRun r;
    const auto* data = result_data(record, {"v"}, r);
    if (!data) return std::nullopt;
    r.value = data->at("v").get<double>();
    return r;
  });
  EXPECT_EQ(runs.ended, 5u);
  EXPECT_EQ(runs.results, 4u);
  EXPECT_EQ(runs.failures_of("t"), 1u);
  const auto [treatment, control] = runs.pairs("t", "c");
  ASSERT_EQ(treatment.size(), 1u);  // seed 1 only
  EXPECT_DOUBLE_EQ(treatment[0].value, 1.0);
  EXPECT_DOUBLE_EQ(control[0].value, 3.0);
  EXPECT_TRUE(runs.pairs("t", "missing").first.empty());
}

}  // namespace
}  // namespace k3lab::experiments::training
