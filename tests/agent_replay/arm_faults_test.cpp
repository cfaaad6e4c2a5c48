// What each arm changes, turn by turn, against the protocol's parameters (full and smoke share them).
#include <gtest/gtest.h>

#include <set>

#include "agent_replay/arm_faults.hpp"
#include "agent_replay/units.hpp"
#include "test_support.hpp"

namespace k3lab::agent_replay_test {
namespace {

using nlohmann::json;
using ar::Arm;

std::set<std::string> names(const json& tools) {
  std::set<std::string> out;
  for (const auto& t : tools) out.insert(t["function"]["name"].get<std::string>());
  return out;
}

TEST(ArmFaults, ArmIdsRoundTripInTheProtocolOrder) {
  const auto& ids = ar::arm_ids();
  ASSERT_EQ(ids.size(), 7u);
  for (const auto& id : ids) EXPECT_EQ(ar::arm_id(ar::arm_from_id(id)), id);
  EXPECT_EQ(ar::arm_from_id("control"), Arm::control);
  EXPECT_EQ(ar::arm_from_id("no-idempotency-key"), Arm::no_idempotency_key);
  try {
    ar::arm_from_id("reasoning-dropped");
    FAIL() << "an unknown arm must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("content-only"), std::string::npos) << "the message lists the arms";
  }
}

TEST(ArmFaults, TheControlSendsTheProtocolSettingsAtEveryTurnAndReplaysMessagesWhole) {
  const auto p = parameters("full");
  const ar::ArmFaults control(Arm::control, p);
  const json full = {{"role", "assistant"},
                     {"content", ""},
                     {"reasoning_content", "r"},
                     {"tool_calls", json::array({{{"id", "functions.get_account:0"}}})}};
  for (int turn = 1; turn <= p.max_model_turns; ++turn) {
    EXPECT_EQ(control.effort_at(turn), p.reasoning_effort);
    EXPECT_EQ(control.max_completion_tokens_at(turn), p.max_completion_tokens);
    EXPECT_FALSE(control.tools_reordered_at(turn));
    EXPECT_EQ(control.tools_at(turn), ar::declared_tools());
    EXPECT_FALSE(control.request_fault_at(turn));
  }
  EXPECT_EQ(control.replayed(full), full);
  EXPECT_FALSE(control.omitted_result(2, false));
  EXPECT_FALSE(control.duplicates_first_mutation());
}

TEST(ArmFaults, EachFaultArmChangesExactlyItsOneThing) {
  const auto p = parameters("full");
  for (const auto& id : ar::arm_ids()) {
    const ar::ArmFaults f(ar::arm_from_id(id), p);
    int changed_settings = 0;
    for (int turn = 1; turn <= p.max_model_turns; ++turn) {
      changed_settings += (f.effort_at(turn) != p.reasoning_effort) + (f.max_completion_tokens_at(turn) != p.max_completion_tokens) +
                          f.tools_reordered_at(turn);
    }
    const json full = {{"role", "assistant"}, {"content", "x"}, {"reasoning_content", "r"}};
    const bool replay_changed = f.replayed(full) != full;
    const bool omits = f.omitted_result(2, false).has_value();
    const int kinds = (changed_settings > 0) + replay_changed + omits + f.duplicates_first_mutation();
    EXPECT_EQ(kinds, id == "control" ? 0 : 1) << id;
  }
}

TEST(ArmFaults, EffortTruncationAndToolOrderFollowTheirTurns) {
  const auto p = parameters("full");
  const ar::ArmFaults effort(Arm::effort_change, p);
  EXPECT_EQ(effort.effort_at(p.faults.effort_change_from_turn - 1), p.reasoning_effort);
  EXPECT_EQ(effort.effort_at(p.faults.effort_change_from_turn), p.faults.effort_change_to);
  EXPECT_EQ(effort.effort_at(p.max_model_turns), p.faults.effort_change_to);

  const ar::ArmFaults cut(Arm::truncated_completion, p);
  const int t = p.faults.truncated_completion_turn;
  EXPECT_EQ(cut.max_completion_tokens_at(t), p.faults.truncated_completion_tokens);
  EXPECT_EQ(cut.max_completion_tokens_at(t + 1), p.max_completion_tokens);

  const ar::ArmFaults reorder(Arm::reordered_tools, p);
  const int from = p.faults.reordered_tools_from_turn;
  EXPECT_EQ(reorder.tools_at(from - 1), ar::declared_tools());
  const json& reordered = reorder.tools_at(from);
  EXPECT_NE(reordered, ar::declared_tools());
  EXPECT_EQ(names(reordered), names(ar::declared_tools()));  // same declarations, other order
  EXPECT_EQ(reordered.front(), ar::declared_tools().back());
}

TEST(ArmFaults, ContentOnlyKeepsRoleAndContent) {
  const ar::ArmFaults f(Arm::content_only, parameters());
  const json full = {{"role", "assistant"},
                     {"content", "Looking it up."},
                     {"reasoning_content", "secret"},
                     {"tool_calls", json::array({{{"id", "functions.get_account:0"}}})}};
  EXPECT_EQ(f.replayed(full), json({{"role", "assistant"}, {"content", "Looking it up."}}));
}

TEST(ArmFaults, OmissionHitsOnlyTheFirstTurnWithTwoCallsAtTheConfiguredPosition) {
  auto p = parameters();
  p.faults.omitted_result_position = "second";
  const ar::ArmFaults second(Arm::omitted_tool_result, p);
  EXPECT_FALSE(second.omitted_result(1, false));
  EXPECT_EQ(second.omitted_result(2, false), std::optional<std::size_t>(1));
  EXPECT_EQ(second.omitted_result(3, false), std::optional<std::size_t>(1));
  EXPECT_FALSE(second.omitted_result(2, true));
  p.faults.omitted_result_position = "first";
  EXPECT_EQ(ar::ArmFaults(Arm::omitted_tool_result, p).omitted_result(2, false), std::optional<std::size_t>(0));
}

}  // namespace
}  // namespace k3lab::agent_replay_test
