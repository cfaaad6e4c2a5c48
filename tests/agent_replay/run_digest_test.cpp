// The page's numbers from hand-built terminal records: per-arm tallies, pass^k, cost per completed
// task, the paired comparison's direction, and the boundary text for a simulated endpoint.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "agent_replay/run_digest.hpp"
#include "agent_replay/summary.hpp"
#include "agent_replay/units.hpp"
#include "k3lab/core/protocol.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;

json record(const std::string& arm, int task, int rep, bool success, int duplicates, double cost,
            const std::string& kind = "result") {
  json data = {{"task_id", "T0" + std::to_string(task)},
               {"endpoint", "embedded-mock"},
               {"simulated", true},
               {"success", success},
               {"stop", success ? "answered" : "api_error"},
               {"model_turns", 2},
               {"fault", {{"applied", arm != "control"}}},
               {"metrics",
                {{"duplicate_mutations", duplicates},
                 {"unexpected_tool_names", 0},
                 {"unmatched_tool_calls", success ? 0 : 1},
                 {"transport_retries", 0},
                 {"overload_retries", 0},
                 {"error_classes", success ? json::object() : json({{"invalid_request", 1}})},
                 {"finish_reasons", {{"stop", 1}}},
                 {"prompt_tokens", 1000},
                 {"cached_tokens", 250},
                 {"completion_tokens", 10},
                 {"prompt_tokens_after_turn_1", 600},
                 {"cached_tokens_after_turn_1", 300},
                 {"cost_usd", cost}}},
               {"api_errors", success ? json::array()
                                      : json::array({{{"http_status", 400},
                                                      {"error_class", "invalid_request"},
                                                      {"message", "Invalid request: x"}}})},
               {"calls", json::array({{{"model", "kimi-k3"}, {"system_fingerprint", "k3lab-mock"}, {"error_class", "none"}}})}};
  return {{"kind", kind},
          {"unit", ar::unit_id(task, arm, rep)},
          {"spec", {{"arm", arm}, {"task", task}, {"rep", rep}}},
          {"data", data},
          {"timing", {{"calls", json::array({{{"started_utc", "2026-08-03T10:00:00.000Z"},
                                               {"finished_utc", "2026-08-03T10:00:01.000Z"}}})}}}};
}

ar::Parameters two_tasks_three_reps() {
  auto p = parameters("full");
  p.task_count = 2;
  p.repetitions = 3;
  p.bootstrap_resamples = 2000;
  return p;
}

std::vector<json> records() {
  std::vector<json> out;
  for (int rep = 1; rep <= 3; ++rep) {
    for (int task = 1; task <= 2; ++task) {
      out.push_back(record("control", task, rep, true, 0, 0.01));
      // content-only: task 1 fails every time, task 2 succeeds once (rep 1).
      out.push_back(record("content-only", task, rep, task == 2 && rep == 1, 0, 0.02));
      out.push_back(record("no-idempotency-key", task, rep, task == 2, task == 1 ? 1 : 0, 0.01));
    }
  }
  out.push_back(record("effort-change", 1, 1, false, 0, 0.05, "invalid"));
  return out;
}

TEST(RunDigest, TalliesPerArmMatchTheRecords) {
  const auto p = two_tasks_three_reps();
  const auto d = ar::digest_run(p, records(), records());
  const auto* control = d.arm("control");
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(control->planned, 6u);
  EXPECT_EQ(control->results, 6u);
  EXPECT_EQ(control->successes, 6u);
  EXPECT_NEAR(*control->cost_per_completed_task(), 0.01, 1e-12);
  EXPECT_NEAR(*control->cached_ratio(), 0.25, 1e-12);
  EXPECT_NEAR(*control->cached_ratio_after_turn_1(), 0.5, 1e-12);

  const auto* content_only = d.arm("content-only");
  EXPECT_EQ(content_only->successes, 1u);
  EXPECT_EQ(content_only->stops.at("api_error"), 5u);
  EXPECT_EQ(content_only->unmatched_tool_calls, 5);
  EXPECT_EQ(content_only->error_classes.at("invalid_request"), 5u);
  EXPECT_EQ(content_only->error_messages.at("invalid_request (HTTP 400: Invalid request: x)"), 5u);
  // Cost per completed task: all six runs' cost over its one success.
  EXPECT_NEAR(*content_only->cost_per_completed_task(), 0.12, 1e-12);
  std::vector<ar::TaskTally> tallies;
  for (const auto& [task, t] : content_only->tasks) tallies.push_back(t);
  EXPECT_NEAR(*ar::pass_hat_k(tallies, 1), (0.0 + 1.0 / 3.0) / 2.0, 1e-12);
  EXPECT_NEAR(*ar::pass_hat_k(tallies, 3), 0.0, 1e-12);

  const auto* effort = d.arm("effort-change");
  EXPECT_EQ(effort->invalid, 1u);
  EXPECT_EQ(effort->results, 0u);
  EXPECT_NEAR(effort->cost_usd, 0.05, 1e-12);  // invalid runs spent money too
  EXPECT_FALSE(effort->cost_per_completed_task());

  EXPECT_EQ(d.endpoints, std::set<std::string>({"embedded-mock"}));
  EXPECT_EQ(d.response_models, std::set<std::string>({"kimi-k3"}));
  EXPECT_EQ(d.first_call_utc, "2026-08-03T10:00:00.000Z");
}

TEST(RunDigest, ThePairedComparisonPointsTheRightWay) {
  const auto p = two_tasks_three_reps();
  const auto d = ar::digest_run(p, records(), records());
  const auto comparisons = ar::compare_with_control(p, d);
  ASSERT_EQ(comparisons.size(), 6u);
  for (const auto& c : comparisons) {
    if (c.arm == "content-only") {
      EXPECT_EQ(c.tasks, 2u);
      // Per-task differences: 0 - 1 = -1 and 1/3 - 1 = -2/3; mean -5/6, every resample negative.
      EXPECT_NEAR(*c.success_difference, -5.0 / 6.0, 1e-12);
      EXPECT_LT(*c.success_high, 0.0);
      EXPECT_TRUE(c.success_supports);
      EXPECT_FALSE(c.duplicates_support);
    } else if (c.arm == "no-idempotency-key") {
      EXPECT_NEAR(*c.duplicate_difference, 0.5, 1e-12);  // 1 duplicate per run on task 1, 0 on task 2
      EXPECT_GE(*c.duplicate_low, 0.0);
      EXPECT_NEAR(*c.success_difference, -0.5, 1e-12);
    } else if (c.arm == "effort-change") {
      EXPECT_EQ(c.tasks, 0u);  // no valid run
      EXPECT_FALSE(c.success_difference);
    }
  }
}

TEST(RunDigest, ThePageNamesTheSimulatedEndpointAndTheBoundary) {
  const auto p = two_tasks_three_reps();
  const auto protocol = core::load_protocol(protocol_file(), &ar::parameter_schema());
  json manifest = {{"parameters", protocol_parameters("full")}};
  manifest["parameters"]["task_count"] = 2;
  experiments::RunRecords run{manifest, {records(), {}, 0}, {}};
  report::Page page;
  ar::summarise_run(protocol, run, page);
  std::string text;
  for (const auto& b : page.blocks) text += b.markdown + b.table.title + b.table.caption;
  EXPECT_NE(text.find("The simulated endpoint"), std::string::npos);
  EXPECT_EQ(text.find("The Kimi K3 API"), std::string::npos);
  EXPECT_NE(text.find("It cannot say"), std::string::npos);
  EXPECT_NE(text.find("API errors observed in this window"), std::string::npos);
  EXPECT_NE(text.find("content-only: the fault took effect in 6 of 6 runs; 1 of 6 valid runs succeeded"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("effort-change: no valid run"), std::string::npos) << text;
}

TEST(RunDigest, AFaultThatNeverTookEffectSaysNothingInsteadOfNoCost) {
  const auto protocol = core::load_protocol(protocol_file(), &ar::parameter_schema());
  json manifest = {{"parameters", protocol_parameters("full")}};
  manifest["parameters"]["task_count"] = 2;
  auto all = records();
  for (int task = 1; task <= 2; ++task) {
    for (int rep = 1; rep <= 3; ++rep) {
      json r = record("omitted-tool-result", task, rep, true, 0, 0.01);
      r["data"]["fault"]["applied"] = false;  // read-only single-call tasks: no turn with two calls
      all.push_back(r);
    }
  }
  experiments::RunRecords run{manifest, {all, {}, 0}, {}};
  report::Page page;
  ar::summarise_run(protocol, run, page);
  std::string text;
  for (const auto& b : page.blocks) text += b.markdown;
  EXPECT_NE(text.find("omitted-tool-result: the fault never took effect in its 6 runs"), std::string::npos) << text;
  EXPECT_EQ(text.find("omitted-tool-result: the fault took effect"), std::string::npos);
}

// The cost cells of the tokens/cost table, by arm.
std::map<std::string, report::Cell> cost_cells(const report::Page& page) {
  std::map<std::string, report::Cell> out;
  for (const auto& b : page.blocks) {
    if (b.table.id != "tokens-cache-cost-by-arm") continue;
    const auto column = std::find(b.table.columns.begin(), b.table.columns.end(), "cost (USD)") - b.table.columns.begin();
    for (const auto& row : b.table.rows) out[std::get<std::string>(row[0].value)] = row[column];
  }
  return out;
}

TEST(RunDigest, CallsWithoutUsageAreCountedAndTheirArmsCostIsUnknown) {
  const auto protocol = core::load_protocol(protocol_file(), &ar::parameter_schema());
  json manifest = {{"parameters", protocol_parameters("full")}, {"options", {{"served_model", "k3-local"}}}};
  manifest["parameters"]["task_count"] = 2;
  auto all = records();
  int marked = 0;
  for (auto& r : all) {
    if (r["spec"]["arm"] == "control" && marked < 2) {
      r["data"]["calls"][0]["usage_reported"] = false;
      ++marked;
    }
  }
  ASSERT_EQ(marked, 2);
  const auto d = ar::digest_run(two_tasks_three_reps(), all, all);
  EXPECT_EQ(d.arm("control")->usage_missing_calls, 2u);
  EXPECT_EQ(d.arm("content-only")->usage_missing_calls, 0u);

  experiments::RunRecords run{manifest, {all, {}, 0}, {}};
  report::Page page;
  ar::summarise_run(protocol, run, page);
  const auto costs = cost_cells(page);
  ASSERT_TRUE(costs.count("control"));
  EXPECT_EQ(std::get<std::string>(costs.at("control").value), "unknown");
  EXPECT_TRUE(std::holds_alternative<double>(costs.at("content-only").value)) << "an arm with usage keeps its cost";
  std::string text;
  for (const auto& b : page.blocks) text += b.markdown + b.table.caption;
  EXPECT_NE(text.find("usage-missing: 2 successful call(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("Served model: requests named the model \"k3-local\""), std::string::npos) << text;
}

}  // namespace
}  // namespace k3lab::agent_replay_test
