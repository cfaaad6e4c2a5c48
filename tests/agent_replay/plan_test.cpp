// The frozen ledger the runner executes: 504 runs over the seven arms in the full profile, and task
// counts limited to the frozen tasks that exist.
#include <gtest/gtest.h>

#include <optional>

#include "agent_replay/plan.hpp"
#include "agent_replay/units.hpp"
#include "agent_replay/window_rule.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

TEST(AgentReplayPlan, TheFullProfileHas504RunsOverAllSevenArms) {
  const auto p = parameters("full");
  const auto units = ar::enumerate_units(p);
  EXPECT_EQ(units.size(), 504u);
  const auto details = ar::plan_details(p, units);
  EXPECT_EQ(details["runs"]["total"], 504);
  ASSERT_EQ(details["runs"]["by_arm"].size(), 7u);
  for (const auto& arm : ar::arm_ids()) EXPECT_EQ(details["runs"]["by_arm"][arm], 72) << arm;
  // Every unit's task exists in the frozen catalogue.
  for (const auto& u : units) EXPECT_LE(u.spec["task"].get<int>(), validate::kAgentTaskCount);
}

TEST(AgentReplayPlan, ATaskCountBeyondTheFrozenTasksIsRefusedByName) {
  auto j = protocol_parameters("full");
  j["task_count"] = validate::kAgentTaskCount + 1;
  try {
    ar::parse_parameters(j);
    FAIL() << "task_count 25 must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.task_count"), std::string::npos) << e.what();
  }
}

TEST(AgentReplayPlan, TheWorstCaseCountsEverySend) {
  const auto p = parameters("full");
  const auto details = ar::plan_details(p, ar::enumerate_units(p));
  // 504 runs x 8 turns, each turn sent at most 1 + 2 times whatever the error class.
  EXPECT_EQ(details["model_calls"]["most_before_transport_retries"], 504 * 8);
  EXPECT_EQ(details["model_calls"]["most_sends_every_error_class"], 504 * 8 * 3);
}

// A result the endpoint ended with a 4xx at `turn`; the arm's fault (if any) applied at `fault_turn`.
nlohmann::json rejected(const std::string& arm, int turn, std::optional<int> fault_turn, int status = 400) {
  return {{"kind", "result"},
          {"unit", "task=1/arm=" + arm + "/rep=1"},
          {"spec", {{"arm", arm}}},
          {"data",
           {{"stop", "api_error"},
            {"fault", {{"applied", fault_turn.has_value()}, {"turn", fault_turn ? nlohmann::json(*fault_turn) : nlohmann::json()}}},
            {"api_errors",
             {{{"turn", turn}, {"http_status", status}, {"error_class", "invalid_request"},
               {"message", "HTTP 400: maximum context length is 4096 tokens"}}}}}}};
}

TEST(AgentReplayWindow, RejectionsBeforeAnyFaultAreAConfigurationProblemNotOutcomes) {
  const auto p = parameters("full");  // 72 runs per arm, 3 tolerated
  std::vector<nlohmann::json> records;
  for (int i = 0; i < 3; ++i) records.push_back(rejected("control", 1, std::nullopt));
  EXPECT_FALSE(ar::check_invalid_window(p, records).stop);
  records.push_back(rejected("control", 1, std::nullopt));
  const auto v = ar::check_invalid_window(p, records);
  EXPECT_TRUE(v.stop);
  EXPECT_NE(v.reason.find("before any fault was applied"), std::string::npos) << v.reason;
  EXPECT_EQ(v.data["rejected_before_fault_by_arm"]["control"], 4);
}

TEST(AgentReplayWindow, RejectionsTheFaultCausedAreOutcomes) {
  const auto p = parameters("full");
  std::vector<nlohmann::json> records;
  // content-only: the fault acts at turn 2 and the endpoint rejects turn 2, in every run.
  for (int i = 0; i < 72; ++i) records.push_back(rejected("content-only", 2, 2));
  EXPECT_FALSE(ar::check_invalid_window(p, records).stop);
  // A rejection at turn 1 while the fault only acts at turn 2 is not the fault's.
  for (int i = 0; i < 4; ++i) records.push_back(rejected("effort-change", 1, 2));
  EXPECT_TRUE(ar::check_invalid_window(p, records).stop);
}

TEST(AgentReplayWindow, AConfigurationErrorStopsAtOnce) {
  const auto p = parameters("full");
  auto refused = rejected("control", 1, std::nullopt, 404);
  refused["kind"] = "failure";
  refused["data"]["api_errors"][0]["error_class"] = "not_found";
  refused["data"]["api_errors"][0]["message"] = "HTTP 404: The model `kimi-k3` does not exist";
  const auto v = ar::check_invalid_window(p, {refused});
  EXPECT_TRUE(v.stop);
  EXPECT_EQ(v.data["configuration_error"]["label"], "HTTP 404 (not_found)");
  EXPECT_NE(v.reason.find("--fresh"), std::string::npos) << v.reason;
}

}  // namespace
}  // namespace k3lab::agent_replay_test
