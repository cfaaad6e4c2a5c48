// Error messages are scrubbed of the request's reasoning before a log line or a record sees them.
#include <gtest/gtest.h>

#include "k3lab/api/reasoning_echo.hpp"

namespace k3lab::api {
namespace {

using nlohmann::json;

const std::string kLong = "The user wants the balance of account A-17, so first I call get_account with it.";

json history(const std::string& reasoning) {
  return json::array({{{"role", "user"}, {"content", "go"}},
                      {{"role", "assistant"}, {"content", ""}, {"reasoning_content", reasoning}},
                      {{"role", "tool"}, {"tool_call_id", "a"}, {"content", "{}"}}});
}

TEST(ReasoningEcho, AMessageQuotingLongReasoningIsReplacedWhole) {
  ASSERT_GE(kLong.size(), kReasoningNeedleBytes);
  // Quoted from the start but cut part-way, as servers truncate echoes.
  const std::string quoted = "cannot accept: " + kLong.substr(0, kReasoningNeedleBytes + 3) + "...";
  EXPECT_EQ(scrub_reasoning_echo(quoted, history(kLong)), kReasoningEchoRemoved);
}

TEST(ReasoningEcho, ShortReasoningIsCutWhereItOccursAndTheRestKept) {
  EXPECT_EQ(scrub_reasoning_echo("bad: plan A; again plan A.", history("plan A")),
            "bad: [reasoning removed]; again [reasoning removed].");
}

TEST(ReasoningEcho, OrdinaryErrorsAndOtherFieldsAreUntouched) {
  const std::string documented =
      "thinking is enabled but reasoning_content is missing in assistant tool call message at index 1";
  EXPECT_EQ(scrub_reasoning_echo(documented, history(kLong)), documented);
  // Content (not reasoning) may be quoted: it is stored anyway.
  EXPECT_EQ(scrub_reasoning_echo("echo: go", history(kLong)), "echo: go");
  EXPECT_EQ(scrub_reasoning_echo("x", json::object()), "x");
  EXPECT_EQ(scrub_reasoning_echo("x", history("")), "x");
}

}  // namespace
}  // namespace k3lab::api
