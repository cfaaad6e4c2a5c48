// agent-replay: the run ledger (seed: 24 tasks x 7 arms x 3 repetitions = 504), the faults each arm
// carries, and the per-arm 5% window rule at its boundary.
#include <map>

#include <gtest/gtest.h>

#include "agent_replay/parameters.hpp"
#include "plan_test_support.hpp"

namespace k3lab::experiments::plan_test {
namespace {

struct AgentReplay : ::testing::Test {
  const Case& c = case_for("agent-replay");
  core::Protocol protocol = load(c);
  std::unique_ptr<Experiment> experiment = c.make();
  nlohmann::json parameters = protocol.parameters_for("full");
  std::vector<Unit> units = experiment->enumerate(protocol, parameters);
};

TEST_F(AgentReplay, SeedArithmeticByAxis) {
  std::map<std::string, int> by_arm;
  std::map<int, int> by_task;
  for (const auto& u : units) {
    ++by_arm[u.spec.at("arm").get<std::string>()];
    ++by_task[u.spec.at("task").get<int>()];
    EXPECT_EQ(u.spec.at("max_model_turns"), 8);
  }
  EXPECT_EQ(by_arm.size(), 7u);
  for (const auto& [arm, n] : by_arm) EXPECT_EQ(n, 72) << arm;  // 24 tasks x 3 repetitions
  EXPECT_EQ(by_task.size(), 24u);
  for (const auto& [task, n] : by_task) EXPECT_EQ(n, 21) << task;  // 7 arms x 3 repetitions
  EXPECT_EQ(units.front().id, "task=1/arm=control/rep=1");
  EXPECT_EQ(units.back().id, "task=24/arm=reordered-tools/rep=3");
}

TEST_F(AgentReplay, OnlyTheControlRunsWithoutAFault) {
  for (const auto& u : units) {
    const bool control = u.spec.at("arm") == "control";
    EXPECT_EQ(u.spec.at("fault").is_null(), control) << u.id;
    if (u.spec.at("arm") == "effort-change") {
      EXPECT_EQ(u.spec["fault"]["from_effort"], "high");
      EXPECT_EQ(u.spec["fault"]["to_effort"], "low");
    }
    if (u.spec.at("arm") == "no-idempotency-key") {
      EXPECT_EQ(u.spec["fault"]["duplicate_dispatches"], 1);
    }
  }
}

TEST_F(AgentReplay, WindowIsInvalidatedWhenOneArmExceedsFivePercent) {
  // 5% of an arm's 72 runs is 3.6: three invalid runs in every arm keep the window, a fourth in any
  // one arm invalidates it (pooling across arms would hide that arm).
  std::map<std::string, int> bad;
  std::vector<nlohmann::json> records;
  for (const auto& u : units) {
    const std::string arm = u.spec.at("arm").get<std::string>();
    records.push_back(terminal(u, bad[arm] < 3 ? (bad[arm] % 2 ? "failure" : "invalid") : "result"));
    ++bad[arm];
  }
  auto verdict = experiment->check_window(protocol, parameters, records);
  EXPECT_FALSE(verdict.stop) << verdict.reason;
  for (auto& r : records) {
    if (r["spec"]["arm"] == "truncated-completion" && r["kind"] == "result") {
      r["kind"] = "invalid";
      break;
    }
  }
  verdict = experiment->check_window(protocol, parameters, records);
  EXPECT_TRUE(verdict.stop);
  EXPECT_NE(verdict.reason.find("truncated-completion"), std::string::npos) << verdict.reason;
  EXPECT_NE(verdict.reason.find("invalidate the whole test window"), std::string::npos) << verdict.reason;
}

TEST_F(AgentReplay, FaultsThatCouldNeverHappenAreRejected) {
  auto broken = parameters;
  broken["faults"]["reordered_tools"]["from_turn"] = 9;
  try {
    agent_replay::parse_parameters(broken);
    ADD_FAILURE() << "a fault after the last model turn was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("parameters.faults.reordered_tools.from_turn"), std::string::npos) << e.what();
  }
  broken = parameters;
  broken["faults"]["effort_change"]["to_effort"] = "high";
  EXPECT_THROW(agent_replay::parse_parameters(broken), std::invalid_argument);
  broken = parameters;
  broken["faults"]["truncated_completion"]["max_completion_tokens"] = 16384;
  EXPECT_THROW(agent_replay::parse_parameters(broken), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::experiments::plan_test
