#include "k3lab/validate/scripted_agent.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "k3lab/validate/agent_loop.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/world_tools.hpp"

namespace k3lab::validate {
namespace {

using nlohmann::json;

json conversation(const std::string& instruction) {
  return json::array({{{"role", "system"}, {"content", agent_system_prompt()}}, {{"role", "user"}, {"content", instruction}}});
}

// Dispatches the reply's tool calls to `world`, appending a tool message for each call whose index is
// not in `omit`.
void dispatch(World& world, json& messages, const json& reply, const std::set<std::size_t>& omit = {}) {
  messages.push_back(reply);
  for (std::size_t i = 0; i < reply["tool_calls"].size(); ++i) {
    const json& call = reply["tool_calls"][i];
    const ToolOutcome outcome = world.call_with_arguments_text(call["function"]["name"].get<std::string>(),
                                                               call["function"]["arguments"].get<std::string>());
    if (omit.count(i) == 0) {
      messages.push_back({{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", outcome.content()}});
    }
  }
}

TEST(ScriptedAgent, IssuesIndependentCallsInParallelWithKimiStyleIds) {
  const AgentTurn turn = scripted_agent_reply(conversation("What is the combined stock of SKU-LAMP and SKU-FAN?"),
                                              world_tool_schemas());
  EXPECT_EQ(turn.finish_reason, "tool_calls");
  ASSERT_EQ(turn.message["tool_calls"].size(), 2u);
  EXPECT_EQ(turn.message["tool_calls"][0]["id"], "functions.get_inventory:0");
  EXPECT_EQ(turn.message["tool_calls"][1]["id"], "functions.get_inventory:1");
  EXPECT_EQ(turn.message["tool_calls"][1]["type"], "function");
  EXPECT_EQ(json::parse(turn.message["tool_calls"][1]["function"]["arguments"].get<std::string>()),
            json({{"sku", "SKU-FAN"}}));
  EXPECT_TRUE(turn.message["reasoning_content"].is_string());
  EXPECT_FALSE(turn.message["reasoning_content"].get<std::string>().empty());
}

TEST(ScriptedAgent, ReissuesACallWhoseResultWasOmitted) {
  World world;
  json messages = conversation("What is the combined stock of SKU-LAMP and SKU-FAN?");
  const json first = scripted_agent_reply(messages, world_tool_schemas()).message;
  dispatch(world, messages, first, {1});  // drop the SKU-FAN result
  const json second = scripted_agent_reply(messages, world_tool_schemas()).message;
  ASSERT_EQ(second["tool_calls"].size(), 1u);
  EXPECT_EQ(second["tool_calls"][0]["function"]["arguments"], first["tool_calls"][1]["function"]["arguments"]);
  EXPECT_EQ(second["tool_calls"][0]["id"], "functions.get_inventory:2");  // a fresh id
  dispatch(world, messages, second);
  const AgentTurn last = scripted_agent_reply(messages, world_tool_schemas());
  EXPECT_EQ(last.finish_reason, "stop");
  EXPECT_NE(last.message["content"].get<std::string>().find("RESULT: 17"), std::string::npos);
}

TEST(ScriptedAgent, ReissuedMutationReusesItsKeySoTheWorldRunsItOnce) {
  World world;
  const AgentTask& task = agent_task("T17");  // two restocks in one turn
  json messages = conversation(task.instruction);
  const json first = scripted_agent_reply(messages, world_tool_schemas()).message;
  ASSERT_EQ(first["tool_calls"].size(), 2u);
  dispatch(world, messages, first, {0});  // both executed, the first result lost
  const json second = scripted_agent_reply(messages, world_tool_schemas()).message;
  ASSERT_EQ(second["tool_calls"].size(), 1u);
  const json a = json::parse(first["tool_calls"][0]["function"]["arguments"].get<std::string>());
  const json b = json::parse(second["tool_calls"][0]["function"]["arguments"].get<std::string>());
  EXPECT_EQ(a, b);
  EXPECT_TRUE(std::regex_match(b["idempotency_key"].get<std::string>(), std::regex("k3-[0-9a-f]{16}")));
  dispatch(world, messages, second);
  const AgentTurn last = scripted_agent_reply(messages, world_tool_schemas());
  EXPECT_EQ(world.duplicate_mutations(), 0u);
  EXPECT_EQ(world.mutation_log().size(), 2u);
  EXPECT_TRUE(validate_agent_task("T17", world, last.message["content"].get<std::string>()).passed);
}

TEST(ScriptedAgent, GeneralisesBeyondTheFrozenInstances) {
  World world;
  const AgentModel model = [](const json& m, const json& t) { return scripted_agent_reply(m, t).message; };
  AgentLoopResult run = run_plain_agent_loop(world, "Transfer 10.50 from ACC-105 to ACC-103.", model);
  EXPECT_NE(run.final_content.find("RESULT: DONE"), std::string::npos);
  EXPECT_EQ(world.state().accounts[4].balance_cents, 74200 - 1050);
  world.reset();
  run = run_plain_agent_loop(world, "Who has the larger balance, Alice Moreno or Farid Haddad? Answer with the full name.", model);
  EXPECT_NE(run.final_content.find("RESULT: Farid Haddad"), std::string::npos);
  world.reset();
  run = run_plain_agent_loop(world, "Place an order for 1 unit of SKU-FAN for Bruno Tanaka.", model);
  EXPECT_NE(run.final_content.find("RESULT: DONE"), std::string::npos);
  EXPECT_EQ(world.state().orders.back().account_id, "ACC-102");
}

TEST(ScriptedAgent, ReportsMissingToolsAndUnsupportedRequests) {
  json tools = json::array();
  for (const auto& t : world_tool_schemas()) {
    if (t["function"]["name"] != "transfer_funds") tools.push_back(t);
  }
  AgentTurn turn = scripted_agent_reply(conversation("Transfer 25.00 from ACC-101 to ACC-102."), tools);
  EXPECT_EQ(turn.finish_reason, "stop");
  EXPECT_NE(turn.message["content"].get<std::string>().find("RESULT: FAILED: the tool transfer_funds is not available"),
            std::string::npos);
  turn = scripted_agent_reply(conversation("Write me a poem."), world_tool_schemas());
  EXPECT_NE(turn.message["content"].get<std::string>().find("RESULT: FAILED: unsupported request"), std::string::npos);
  turn = scripted_agent_reply(json::array({{{"role", "system"}, {"content", "x"}}}), world_tool_schemas());
  EXPECT_NE(turn.message["content"].get<std::string>().find("FAILED: no user instruction"), std::string::npos);
}

TEST(ScriptedAgent, ToolErrorsEndTheTaskWithFailed) {
  World world;
  const AgentModel model = [](const json& m, const json& t) { return scripted_agent_reply(m, t).message; };
  const AgentLoopResult run = run_plain_agent_loop(world, agent_task("T16").instruction, model);
  EXPECT_NE(run.final_content.find("RESULT: FAILED: ACC-104 has 88.40, needs 500.00"), std::string::npos)
      << run.final_content;
}

TEST(ScriptedAgent, DeterministicAndIndependentOfToolOrder) {
  json messages = conversation(agent_task("T19").instruction);
  json reversed = json::array();
  const json tools = world_tool_schemas();
  for (auto it = tools.rbegin(); it != tools.rend(); ++it) reversed.push_back(*it);
  const AgentTurn a = scripted_agent_reply(messages, tools);
  const AgentTurn b = scripted_agent_reply(messages, tools);
  const AgentTurn c = scripted_agent_reply(messages, reversed);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.message, c.message);
}

TEST(ScriptedAgent, ReasoningEffortChangesOnlyTheReasoningLength) {
  const json messages = conversation(agent_task("T24").instruction);
  const AgentTurn low = scripted_agent_reply(messages, world_tool_schemas(), {"low"});
  const AgentTurn max = scripted_agent_reply(messages, world_tool_schemas(), {"max"});
  EXPECT_EQ(low.message["tool_calls"], max.message["tool_calls"]);
  EXPECT_LT(low.message["reasoning_content"].get<std::string>().size(),
            max.message["reasoning_content"].get<std::string>().size());
  EXPECT_THROW(scripted_agent_reply(messages, world_tool_schemas(), {"medium"}), std::invalid_argument);
}

TEST(ScriptedAgent, RejectsMalformedRequests) {
  EXPECT_THROW(scripted_agent_reply(json::object(), world_tool_schemas()), std::invalid_argument);
  EXPECT_THROW(scripted_agent_reply(json::array({{{"content", "x"}}}), world_tool_schemas()), std::invalid_argument);
  EXPECT_THROW(scripted_agent_reply(conversation("x"), json::object()), std::invalid_argument);
  EXPECT_THROW(scripted_agent_reply(conversation("x"), json::array({{{"type", "function"}}})), std::invalid_argument);
}

TEST(ScriptedAgent, ContentOnlyHistoryCannotBeCompleted) {
  // The "keep only assistant content" fault strips tool calls from replayed assistant messages: the
  // agent can no longer match results to calls and keeps asking, so the run hits the turn limit.
  World world;
  const AgentModel model = [](const json& m, const json& t) { return scripted_agent_reply(m, t).message; };
  const AgentModel content_only = [&](const json& messages, const json& tools) {
    json stripped = json::array();
    for (const auto& m : messages) {
      if (m["role"] == "assistant") {
        stripped.push_back({{"role", "assistant"}, {"content", m.value("content", "")}});
      } else if (m["role"] != "tool") {
        stripped.push_back(m);
      }
    }
    return model(stripped, tools);
  };
  const AgentLoopResult run = run_plain_agent_loop(world, agent_task("T01").instruction, content_only, 3);
  EXPECT_FALSE(run.answered);
  EXPECT_EQ(run.model_turns, 3);
}

}  // namespace
}  // namespace k3lab::validate
