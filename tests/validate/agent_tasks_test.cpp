#include "k3lab/validate/agent_tasks.hpp"

#include <gtest/gtest.h>

#include <set>

#include "k3lab/validate/agent_loop.hpp"
#include "k3lab/validate/agent_task_reference.hpp"
#include "k3lab/validate/scripted_agent.hpp"

namespace k3lab::validate {
namespace {

using nlohmann::json;

AgentModel scripted_model() {
  return [](const json& messages, const json& tools) { return scripted_agent_reply(messages, tools).message; };
}

bool has_tag(const AgentTask& task, const std::string& tag) {
  for (const auto& t : task.tags) {
    if (t == tag) return true;
  }
  return false;
}

TEST(AgentTasks, FrozenCatalogShape) {
  const auto& tasks = agent_tasks();
  ASSERT_EQ(tasks.size(), static_cast<std::size_t>(kAgentTaskCount));
  std::set<std::string> ids;
  int parallel = 0;
  int mutation = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    EXPECT_EQ(tasks[i].id, (i < 9 ? "T0" : "T") + std::to_string(i + 1));
    EXPECT_TRUE(ids.insert(tasks[i].id).second);
    const TaskReference& ref = agent_task_reference(tasks[i].id);
    EXPECT_GE(ref.tool_calls, 1);
    EXPECT_LE(ref.tool_calls, 4);
    parallel += has_tag(tasks[i], "parallel") ? 1 : 0;
    mutation += has_tag(tasks[i], "mutation") ? 1 : 0;
    EXPECT_EQ(has_tag(tasks[i], "mutation"), !ref.mutations.empty()) << tasks[i].id;
  }
  EXPECT_GE(parallel, 6);
  EXPECT_GE(mutation, 12);
  EXPECT_THROW(agent_task("T25"), std::invalid_argument);
}

// Hand-computed from the initial state (independent of the reference mutations' replay).
TEST(AgentTasks, ExpectedStatesMatchHandComputation) {
  WorldState t05 = initial_world_state();
  t05.accounts[0].balance_cents = 125000 - 2500;
  t05.accounts[1].balance_cents = 31075 + 2500;
  EXPECT_EQ(expected_final_state("T05"), t05);

  WorldState t14 = initial_world_state();
  t14.accounts[0].balance_cents = 125000 + 1650 + 3450;  // 1301.00
  t14.orders[0].status = "cancelled";
  t14.orders[1].status = "cancelled";
  t14.inventory[3].stock = 42;  // mugs
  t14.inventory[0].stock = 13;  // lamps
  EXPECT_EQ(expected_final_state("T14"), t14);

  WorldState t22 = initial_world_state();
  t22.accounts[2].balance_cents = 502010 + 9000 - 4500;
  t22.orders[3].status = "cancelled";
  t22.inventory[1].stock = 3 + 2 - 1;
  t22.orders.push_back({"ORD-5006", "ACC-103", "SKU-KETTLE", 1, 4500, "placed"});
  t22.next_order_number = 5007;
  EXPECT_EQ(expected_final_state("T22"), t22);

  EXPECT_EQ(expected_final_state("T15"), initial_world_state());
  EXPECT_EQ(expected_final_state("T16"), initial_world_state());
  EXPECT_EQ(expected_final_state("T01"), initial_world_state());
}

TEST(AgentTasks, ScriptedAgentSolvesEveryTaskThroughThePlainLoop) {
  for (const AgentTask& task : agent_tasks()) {
    SCOPED_TRACE(task.id + ": " + task.instruction);
    World world;
    const AgentLoopResult run = run_plain_agent_loop(world, task.instruction, scripted_model());
    ASSERT_TRUE(run.answered);
    EXPECT_LE(run.model_turns, kMaxModelTurns);
    EXPECT_EQ(run.unexpected_tool_names, 0u);
    EXPECT_EQ(static_cast<int>(run.tool_calls), agent_task_reference(task.id).tool_calls);
    EXPECT_EQ(world.duplicate_mutations(), 0u);
    const TaskVerdict verdict = validate_agent_task(task.id, world, run.final_content);
    EXPECT_TRUE(verdict.passed) << run.final_content << "\n" << task_verdict_json(verdict).dump(2);
    if (has_tag(task, "parallel")) {
      std::size_t widest = 0;
      for (const auto& m : run.messages) {
        if (m.value("role", "") == "assistant" && m.contains("tool_calls")) widest = std::max(widest, m["tool_calls"].size());
      }
      EXPECT_GE(widest, 2u) << "a parallel task needs two tool calls in one turn";
    }
  }
}

TEST(AgentTasks, MutationAppliedTwiceFailsTheValidator) {
  int state_changing = 0;
  for (const AgentTask& task : agent_tasks()) {
    const TaskReference& ref = agent_task_reference(task.id);
    if (ref.mutations.empty()) continue;
    SCOPED_TRACE(task.id);
    World once;
    World twice;
    for (const auto& m : ref.mutations) once.call(m.tool, m.arguments);
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& m : ref.mutations) twice.call(m.tool, m.arguments);
    }
    // Every doubled mutation is detected as a duplicate execution...
    EXPECT_GT(twice.duplicate_mutations(), 0u);
    EXPECT_EQ(once.duplicate_mutations(), 0u);
    // ...and whenever the second execution changes the state, the validator fails even though the
    // answer is right. (A second cancel, or a transfer the first one emptied, fails a business rule
    // and leaves the state alone.)
    const std::string answer = "Done.\nRESULT: " + (ref.result_kind == ResultKind::failed ? std::string("FAILED: x") : ref.value);
    EXPECT_TRUE(validate_agent_task(task.id, once, answer).passed);
    if (twice.state() != once.state()) {
      ++state_changing;
      const TaskVerdict verdict = validate_agent_task(task.id, twice, answer);
      EXPECT_FALSE(verdict.state_ok);
      EXPECT_FALSE(verdict.passed);
    }
  }
  EXPECT_GE(state_changing, 10);
}

TEST(AgentTasks, AnswerCheckIsStrictWhereItMatters) {
  World world;
  EXPECT_TRUE(validate_agent_task("T01", world, "Balance found.\nRESULT: $1,250.00").passed);
  EXPECT_TRUE(validate_agent_task("T01", world, "**RESULT:** 1250").passed);
  EXPECT_FALSE(validate_agent_task("T01", world, "RESULT: 1250.01").passed);
  EXPECT_FALSE(validate_agent_task("T01", world, "RESULT: 1250.00 or 310.75").passed);
  EXPECT_FALSE(validate_agent_task("T01", world, "The balance is 1250.00.").passed);
  EXPECT_TRUE(validate_agent_task("T03", world, "result = acc-102").passed);
  EXPECT_FALSE(validate_agent_task("T03", world, "RESULT: ACC-104").passed);
  EXPECT_TRUE(validate_agent_task("T15", world, "RESULT: FAILED: out of stock").passed);
  EXPECT_FALSE(validate_agent_task("T15", world, "RESULT: DONE").passed);
  const TaskVerdict wrong_state = validate_agent_task("T05", world, "RESULT: DONE");
  EXPECT_TRUE(wrong_state.answer_ok);
  EXPECT_FALSE(wrong_state.state_ok);
  EXPECT_FALSE(wrong_state.reasons.empty());
}

TEST(AgentTasks, ResultLineExtraction) {
  EXPECT_EQ(extract_result_value("summary\nRESULT: 42"), "42");
  EXPECT_EQ(extract_result_value("RESULT: 1\nmore\nResult - 2\n"), "2");
  EXPECT_EQ(extract_result_value("- **Result:** _DONE_"), "DONE");
  EXPECT_FALSE(extract_result_value("Results are in: 42"));
  EXPECT_FALSE(extract_result_value(""));
}

}  // namespace
}  // namespace k3lab::validate
