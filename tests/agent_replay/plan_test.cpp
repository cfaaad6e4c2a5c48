// The frozen ledger the runner executes: 504 runs over the seven arms in the full profile, and task
// counts limited to the frozen tasks that exist.
#include <gtest/gtest.h>

#include "agent_replay/plan.hpp"
#include "agent_replay/units.hpp"
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

}  // namespace
}  // namespace k3lab::agent_replay_test
