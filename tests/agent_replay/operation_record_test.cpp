// The operation record: reopening rebuilds the same state, raw reasoning is refused, a torn last line
// is cut, a damaged line is reported with its file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "agent_replay/operation_record.hpp"
#include "k3lab/core/sha256.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;

json assistant_with_two_calls() {
  return {{"role", "assistant"},
          {"content", ""},
          {"tool_calls", json::array({{{"id", "functions.get_account:0"},
                                        {"type", "function"},
                                        {"function", {{"name", "get_account"}, {"arguments", "{\"account_id\":\"ACC-102\"}"}}}},
                                       {{"id", "functions.get_account:1"},
                                        {"type", "function"},
                                        {"function", {{"name", "get_account"}, {"arguments", "{\"account_id\":\"ACC-104\"}"}}}}})}};
}

void write_conversation(ar::OperationRecord& record) {
  record.append({{"op", "start"}, {"unit", "task=3/arm=control/rep=1"}});
  record.append({{"op", "message"}, {"message", {{"role", "system"}, {"content", "sys"}}}});
  record.append({{"op", "message"}, {"message", {{"role", "user"}, {"content", "Which holds more?"}}}});
  record.append({{"op", "message"},
                 {"turn", 1},
                 {"finish_reason", "tool_calls"},
                 {"message", assistant_with_two_calls()},
                 {"reasoning", {{"present", true}, {"sha256", core::sha256_hex("thinking")}, {"bytes", 8}}}});
  record.append({{"op", "dispatch"}, {"tool_call_id", "functions.get_account:0"}, {"executed", false}, {"content", "{}"}});
  record.append({{"op", "message"},
                 {"message", {{"role", "tool"}, {"tool_call_id", "functions.get_account:0"}, {"content", "{}"}}}});
}

TEST(OperationRecord, ReopeningRebuildsTheSameState) {
  ScratchDir dir;
  const auto path = dir.path() / "ops" / "run.jsonl";
  ar::OperationRecord record(path);
  EXPECT_TRUE(record.empty());
  write_conversation(record);
  const auto& s = record.state();
  EXPECT_EQ(s.model_turns, 1);
  EXPECT_EQ(s.messages.size(), 4u);
  EXPECT_EQ(s.reasoning_sha256[2], core::sha256_hex("thinking"));
  EXPECT_TRUE(s.reasoning_sha256[3].empty());
  EXPECT_EQ(s.last_finish_reason, "tool_calls");
  ASSERT_TRUE(s.next_unsettled_call());
  EXPECT_EQ(s.next_unsettled_call()->id, "functions.get_account:1");  // the first one is answered
  EXPECT_EQ(s.dispatches.count("functions.get_account:0"), 1u);

  const ar::OperationRecord reopened(path);
  EXPECT_EQ(reopened.entries(), record.entries());
  EXPECT_EQ(reopened.state().messages, s.messages);
  EXPECT_EQ(reopened.state().next_unsettled_call()->id, "functions.get_account:1");
  EXPECT_EQ(reopened.state().dispatches.size(), 1u);
}

TEST(OperationRecord, AnOmittedResultSettlesItsCallWithoutAMessage) {
  ScratchDir dir;
  ar::OperationRecord record(dir.path() / "run.jsonl");
  write_conversation(record);
  record.append({{"op", "omitted"}, {"tool_call_id", "functions.get_account:1"}});
  EXPECT_FALSE(record.state().next_unsettled_call());
  EXPECT_TRUE(record.state().omitted_any);
  EXPECT_EQ(record.state().messages.size(), 4u);  // system, user, assistant, one tool message
  EXPECT_EQ(record.state().settled.at("functions.get_account:1"), "omitted");
}

TEST(OperationRecord, RawReasoningIsRefusedAtAnyDepth) {
  ScratchDir dir;
  ar::OperationRecord record(dir.path() / "run.jsonl");
  json message = assistant_with_two_calls();
  message["reasoning_content"] = "private thoughts";
  EXPECT_THROW(record.append({{"op", "message"}, {"message", message}}), std::invalid_argument);
  EXPECT_THROW(record.append({{"op", "call"}, {"record", {{"nested", {{"reasoning_content", "x"}}}}}}),
               std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "run.jsonl"));
  EXPECT_THROW(record.append({{"op", "teleport"}}), std::invalid_argument);
}

TEST(OperationRecord, RedactionKeepsPresenceHashAndSizeOnly) {
  json message = assistant_with_two_calls();
  message["reasoning_content"] = "private thoughts";
  const auto r = ar::redact_assistant(message);
  EXPECT_FALSE(r.message.contains("reasoning_content"));
  EXPECT_EQ(r.message["tool_calls"], message["tool_calls"]);
  EXPECT_EQ(r.reasoning, json({{"present", true}, {"sha256", core::sha256_hex("private thoughts")}, {"bytes", 16}}));
  EXPECT_EQ(ar::redact_assistant(assistant_with_two_calls()).reasoning, json({{"present", false}}));
}

TEST(OperationRecord, ATornLastLineIsCutAndADamagedLineIsReported) {
  ScratchDir dir;
  const auto path = dir.path() / "run.jsonl";
  {
    ar::OperationRecord record(path);
    write_conversation(record);
  }
  const auto size = std::filesystem::file_size(path);
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << "{\"op\":\"dispatch\",\"tool_call_id\":\"functions.get_acc";
  }
  const ar::OperationRecord reopened(path);
  EXPECT_EQ(std::filesystem::file_size(path), size);
  EXPECT_EQ(reopened.entries().size(), 6u);
  {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << "not json\n";
  }
  try {
    const ar::OperationRecord damaged(path);
    FAIL() << "a damaged line must be reported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
}

TEST(OperationRecord, TheVaultFindsReasoningByItsHash) {
  ar::ReasoningVault vault;
  const std::string sha = vault.keep("step one");
  EXPECT_EQ(sha, core::sha256_hex("step one"));
  ASSERT_NE(vault.find(sha), nullptr);
  EXPECT_EQ(*vault.find(sha), "step one");
  EXPECT_EQ(vault.find(core::sha256_hex("other")), nullptr);
}

}  // namespace
}  // namespace k3lab::agent_replay_test
