#include <gtest/gtest.h>

#include "k3lab/api/protocol_check.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;
using Kind = ProtocolViolation::Kind;

json call(const std::string& id) {
  return {{"id", id}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", "{}"}}}};
}
json assistant_calls(std::vector<std::string> ids, const char* reasoning = "thinking") {
  json calls = json::array();
  for (const auto& id : ids) calls.push_back(call(id));
  json m = {{"role", "assistant"}, {"content", ""}, {"tool_calls", calls}};
  if (reasoning) m["reasoning_content"] = reasoning;
  return m;
}
json tool(const std::string& id) { return {{"role", "tool"}, {"tool_call_id", id}, {"content", "ok"}}; }
json user(const std::string& text) { return {{"role", "user"}, {"content", text}}; }

TEST(ReplayProtocol, DocumentedHistoryPasses) {
  const json messages = {user("go"), assistant_calls({"functions.f:0", "functions.f:1"}), tool("functions.f:1"),
                         tool("functions.f:0"), {{"role", "assistant"}, {"content", "done"}}, user("again")};
  EXPECT_FALSE(check_replay_protocol(messages, true).has_value());
}

TEST(ReplayProtocol, MissingReasoningWhileThinking) {
  const json messages = {user("go"), assistant_calls({"a"}, nullptr), tool("a")};
  const auto v = check_replay_protocol(messages, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::missing_reasoning);
  EXPECT_EQ(v->message_index, 1u);
  EXPECT_EQ(v->message, "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1");
  EXPECT_FALSE(check_replay_protocol(messages, false).has_value());
  EXPECT_TRUE(check_replay_protocol(json{user("go"), assistant_calls({"a"}, ""), tool("a")}, true));
}

TEST(ReplayProtocol, OmittedToolResultNamesTheId) {
  const json messages = {user("go"), assistant_calls({"a", "b"}), tool("a"), user("next")};
  const auto v = check_replay_protocol(messages, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::unanswered_tool_call);
  EXPECT_NE(v->message.find("did not have response messages: b"), std::string::npos) << v->message;
  // Also at the end of the history.
  const auto end = check_replay_protocol(json{user("go"), assistant_calls({"a"})}, true);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->kind, Kind::unanswered_tool_call);
}

TEST(ReplayProtocol, UnknownDuplicateAndOrphanToolMessages) {
  auto v = check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("zzz")}, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::unknown_tool_call_id);
  EXPECT_EQ(v->message_index, 2u);
  v = check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("a"), tool("a")}, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::unknown_tool_call_id);
  v = check_replay_protocol(json{user("go"), tool("a")}, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::unknown_tool_call_id);
  // An id from an earlier, already closed tool block is unknown too.
  v = check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("a"), user("x"), tool("a")}, true);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->message_index, 4u);
}

TEST(ReplayProtocol, LenientRuleIgnoresStrayToolMessagesButNotUnansweredCalls) {
  EXPECT_FALSE(check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("zzz"), tool("a")}, true, false));
  EXPECT_FALSE(check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("a"), tool("a")}, true, false));
  EXPECT_FALSE(check_replay_protocol(json{user("go"), tool("a")}, true, false));
  // Rule 2 is documented and stays: a stray message never answers an open id.
  const auto v = check_replay_protocol(json{user("go"), assistant_calls({"a"}), tool("zzz"), user("x")}, true, false);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kind, Kind::unanswered_tool_call);
}

TEST(ReplayProtocol, MalformedMessages) {
  EXPECT_EQ(check_replay_protocol(json::object(), true)->kind, Kind::malformed);
  EXPECT_EQ(check_replay_protocol(json{{{"content", "no role"}}}, true)->kind, Kind::malformed);
  EXPECT_EQ(check_replay_protocol(json{{{"role", "assistant"}, {"reasoning_content", "r"}, {"tool_calls", {{{"type", "function"}}}}}}, true)->kind,
            Kind::malformed);
}

TEST(ReplayProtocol, ThinkingSwitch) {
  EXPECT_TRUE(thinking_enabled(json::object(), true));
  EXPECT_FALSE(thinking_enabled(json::object(), false));
  EXPECT_FALSE(thinking_enabled({{"thinking", {{"type", "disabled"}}}}, true));
  EXPECT_TRUE(thinking_enabled({{"thinking", {{"type", "enabled"}}}}, false));
}

}  // namespace
}  // namespace k3lab::api
