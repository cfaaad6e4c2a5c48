// The simulated endpoint's agent model: it solves every frozen task through the plain loop (checked by
// the hidden validators), pads reasoning by effort, and reports bad requests as 400s.
#include <gtest/gtest.h>

#include "k3lab/mock/agent_model.hpp"
#include "k3lab/api/token_estimate.hpp"
#include "k3lab/validate/agent_loop.hpp"
#include "k3lab/validate/agent_tasks.hpp"
#include "k3lab/validate/world_tools.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;

json as_message(const api::MockReply& reply) {
  json m = {{"role", "assistant"}, {"content", reply.content}, {"reasoning_content", reply.reasoning_content}};
  if (!reply.tool_calls.empty()) {
    m["tool_calls"] = json::array();
    for (const auto& c : reply.tool_calls) {
      m["tool_calls"].push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    }
  }
  return m;
}

TEST(AgentMockModel, SolvesEveryFrozenTaskThroughThePlainLoop) {
  const auto model = mock::agent_mock_model();
  for (const auto& task : validate::agent_tasks()) {
    validate::World world;
    const auto result = validate::run_plain_agent_loop(world, task.instruction, [&](const json& messages, const json& tools) {
      const auto reply = model({{"model", "kimi-k3"}, {"messages", messages}, {"tools", tools}, {"reasoning_effort", "high"}});
      EXPECT_FALSE(reply.error) << task.id;
      return as_message(reply);
    });
    EXPECT_TRUE(result.answered) << task.id;
    EXPECT_LE(result.model_turns, 8) << task.id;
    const auto verdict = validate::validate_agent_task(task.id, world, result.final_content);
    EXPECT_TRUE(verdict.passed) << task.id << ": " << validate::task_verdict_json(verdict).dump();
  }
}

TEST(AgentMockModel, ReasoningIsPaddedToTheLengthOfItsEffort) {
  mock::AgentMockOptions o;
  const std::string scripted = "Request: account balance. Next: call get_account.";
  for (const auto& [effort, tokens] : std::vector<std::pair<std::string, std::int64_t>>{
           {"low", o.reasoning_tokens_low}, {"high", o.reasoning_tokens_high}, {"max", o.reasoning_tokens_max}}) {
    const std::string text = mock::padded_reasoning(scripted, effort, o);
    const auto target = static_cast<std::size_t>(tokens) * api::kApproxBytesPerToken;
    EXPECT_EQ(text.rfind(scripted, 0), 0u) << effort;
    EXPECT_GE(text.size(), target) << effort;
    EXPECT_LT(text.size(), target + mock::reasoning_filler().size()) << effort;
  }
  o.reasoning_tokens_high = 0;
  EXPECT_EQ(mock::padded_reasoning(scripted, "high", o), scripted);
}

TEST(AgentMockModel, TheRequestEffortDecidesAndAnUnknownOneFallsBackToTheDefault) {
  const auto model = mock::agent_mock_model();
  const json messages = json::array({{{"role", "user"}, {"content", "What is the current balance of account ACC-101?"}}});
  auto reasoning_bytes = [&](const json& effort) {
    json request = {{"messages", messages}, {"tools", validate::world_tool_schemas()}};
    if (!effort.is_null()) request["reasoning_effort"] = effort;
    return model(request).reasoning_content.size();
  };
  EXPECT_LT(reasoning_bytes("low"), reasoning_bytes("high"));
  EXPECT_LT(reasoning_bytes("high"), reasoning_bytes("max"));
  EXPECT_EQ(reasoning_bytes("medium"), reasoning_bytes("max"));
  EXPECT_EQ(reasoning_bytes(json()), reasoning_bytes("max"));
  const auto reply = model({{"messages", messages}, {"tools", validate::world_tool_schemas()}});
  ASSERT_EQ(reply.tool_calls.size(), 1u);
  EXPECT_EQ(reply.tool_calls[0].name, "get_account");
  EXPECT_EQ(reply.finish_reason, "tool_calls");
}

TEST(AgentMockModel, MalformedAgentRequestsAre400s) {
  const auto model = mock::agent_mock_model();
  const auto no_tools = model({{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}});
  ASSERT_TRUE(no_tools.error);
  EXPECT_EQ(no_tools.error->status, 400);
  const auto bad_message = model({{"messages", json::array({42})}, {"tools", json::array()}});
  ASSERT_TRUE(bad_message.error);
  EXPECT_NE(bad_message.error->message.find("messages[0]"), std::string::npos);
  mock::AgentMockOptions bad;
  bad.default_effort = "medium";
  EXPECT_THROW(mock::agent_mock_model(bad), std::invalid_argument);
  bad = {};
  bad.reasoning_tokens_low = -1;
  EXPECT_THROW(mock::agent_mock_model(bad), std::invalid_argument);
}

TEST(AgentMockModel, AssumptionsNameEveryUndocumentedBehaviourAndTheConfiguredLengths) {
  mock::AgentMockOptions o;
  o.reasoning_tokens_high = 123;
  const json a = mock::agent_mock_assumptions(o);
  ASSERT_TRUE(a.is_array());
  EXPECT_GE(a.size(), 8u);
  for (const auto& item : a) {
    EXPECT_TRUE(item.contains("behaviour") && item.contains("simulated_as") && item.contains("documented")) << item;
  }
  EXPECT_NE(a.dump().find("123"), std::string::npos);
  EXPECT_NE(a.dump().find("not confirmed on Kimi"), std::string::npos);
}

}  // namespace
}  // namespace k3lab::agent_replay_test
