// Unmatched tool calls, unexpected tool names, call cost and pass^k against hand-computed values.
#include <gtest/gtest.h>

#include "agent_replay/pass_hat_k.hpp"
#include "agent_replay/run_metrics.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;

json call(const std::string& id, const std::string& name = "get_account") {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", "{}"}}}};
}
json assistant(json calls) { return {{"role", "assistant"}, {"content", ""}, {"tool_calls", std::move(calls)}}; }
json tool(const std::string& id) { return {{"role", "tool"}, {"tool_call_id", id}, {"content", "{}"}}; }
const json kUser = {{"role", "user"}, {"content", "q"}};

TEST(RunMetrics, UnmatchedToolCallsCountMissingDuplicatedAndOrphanResults) {
  EXPECT_EQ(ar::count_unmatched_tool_calls(json::array({kUser, assistant({call("a"), call("b")}), tool("a"), tool("b")})), 0u);
  // One of two results omitted.
  EXPECT_EQ(ar::count_unmatched_tool_calls(json::array({kUser, assistant({call("a"), call("b")}), tool("a")})), 1u);
  // A call answered twice.
  EXPECT_EQ(ar::count_unmatched_tool_calls(json::array({kUser, assistant({call("a")}), tool("a"), tool("a")})), 1u);
  // Content-only replay: the calls are gone, so both results are orphans.
  EXPECT_EQ(ar::count_unmatched_tool_calls(
                json::array({kUser, {{"role", "assistant"}, {"content", ""}}, tool("a"), tool("b")})),
            2u);
  // The same id called twice and answered once: one extra call unmatched.
  EXPECT_EQ(ar::count_unmatched_tool_calls(json::array({kUser, assistant({call("a")}), tool("a"), assistant({call("a")})})), 1u);
}

TEST(RunMetrics, UnexpectedToolNamesAreThoseTheRequestDidNotDeclare) {
  const json tools = json::array({{{"type", "function"}, {"function", {{"name", "get_account"}}}}});
  const json messages = json::array({kUser, assistant({call("a"), call("b", "delete_everything")}), tool("a"), tool("b")});
  EXPECT_EQ(ar::count_unexpected_tool_names(messages, tools), 1u);
  EXPECT_EQ(ar::count_unexpected_tool_names(messages, json::array()), 2u);
}

TEST(RunMetrics, CallCostAppliesThePriceTable) {
  auto p = parameters();
  p.pricing.cache_hit = 0.30;
  p.pricing.cache_miss = 3.00;
  p.pricing.output = 15.00;
  // 1,000,000 prompt of which 400,000 cached, 100,000 completion: 0.12 + 1.80 + 1.50.
  EXPECT_NEAR(ar::call_cost_usd(p, 1'000'000, 400'000, 100'000), 3.42, 1e-12);
  EXPECT_EQ(ar::call_cost_usd(p, 0, 0, 0), 0.0);
  EXPECT_THROW(ar::call_cost_usd(p, 10, 11, 0), std::invalid_argument);
  EXPECT_THROW(ar::call_cost_usd(p, 10, 0, -1), std::invalid_argument);
}

TEST(PassHatK, MatchesHandComputedValues) {
  // Tasks with 3/3, 1/3 and 0/3 successes.
  const std::vector<ar::TaskTally> tasks = {{3, 3}, {1, 3}, {0, 3}};
  EXPECT_NEAR(*ar::pass_hat_k(tasks, 1), (1.0 + 1.0 / 3.0 + 0.0) / 3.0, 1e-15);
  EXPECT_NEAR(*ar::pass_hat_k(tasks, 2), (1.0 + 0.0 + 0.0) / 3.0, 1e-15);  // C(1,2) = 0
  EXPECT_NEAR(*ar::pass_hat_k(tasks, 3), 1.0 / 3.0, 1e-15);
  // 2 of 3: pass^2 = C(2,2)/C(3,2) = 1/3.
  EXPECT_NEAR(*ar::pass_hat_k({{2, 3}}, 2), 1.0 / 3.0, 1e-15);
  EXPECT_DOUBLE_EQ(ar::binomial(5, 2), 10.0);
  EXPECT_DOUBLE_EQ(ar::binomial(2, 3), 0.0);
}

TEST(PassHatK, TasksWithTooFewValidRunsAreLeftOutAndCounted) {
  std::size_t used = 0;
  // The second task lost one repetition to an invalid run.
  EXPECT_NEAR(*ar::pass_hat_k({{3, 3}, {2, 2}}, 3, &used), 1.0, 1e-15);
  EXPECT_EQ(used, 1u);
  EXPECT_FALSE(ar::pass_hat_k({{1, 2}}, 3, &used));
  EXPECT_EQ(used, 0u);
  EXPECT_THROW(ar::pass_hat_k({{1, 2}}, 0), std::invalid_argument);
  EXPECT_THROW(ar::pass_hat_k({{3, 2}}, 1), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::agent_replay_test
