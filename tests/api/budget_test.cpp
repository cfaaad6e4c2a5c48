#include <gtest/gtest.h>

#include <limits>

#include "k3lab/api/budget.hpp"
#include "k3lab/api/token_estimate.hpp"

namespace k3lab::api {
namespace {

TEST(BudgetCheck, ExactFitPassesOneOverFails) {
  // The 1M arm of context-probe: 1,048,576 total with 32,768 reserved for the completion.
  EXPECT_NO_THROW(budget_check(1'015'000, 808, 32'768, 1'048'576));
  try {
    budget_check(1'015'001, 808, 32'768, 1'048'576);
    FAIL() << "over-budget request accepted";
  } catch (const BudgetExceeded& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("by 1:"), std::string::npos) << what;
    EXPECT_NE(what.find("prompt 1015001"), std::string::npos) << what;
    EXPECT_NE(what.find("never truncated"), std::string::npos) << what;
  }
}

TEST(BudgetCheck, RejectsZeroBudgetAndOverflowingTerms) {
  EXPECT_THROW(budget_check(1, 1, 1, 0), std::invalid_argument);
  EXPECT_THROW(budget_check(1, 1, 0, 10), std::invalid_argument);
  const auto max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_THROW(budget_check(max, max, max, max), BudgetExceeded);
}

TEST(TokenEstimate, ApproxIsCeilQuarterBytes) {
  EXPECT_EQ(approx_token_count(std::uint64_t{0}), 0u);
  EXPECT_EQ(approx_token_count(std::uint64_t{1}), 1u);
  EXPECT_EQ(approx_token_count(std::uint64_t{4}), 1u);
  EXPECT_EQ(approx_token_count(std::uint64_t{5}), 2u);
  EXPECT_EQ(approx_token_count("\xE5\xAD\x97"), 1u);
}

TEST(TokenEstimate, RequestUpperBoundCountsEveryTextField) {
  const nlohmann::json request = nlohmann::json::parse(R"({"messages": [
    {"role": "system", "content": "abcd"},
    {"role": "user", "content": [{"type": "text", "text": "xy"}, {"type": "text", "text": "z"}]},
    {"role": "assistant", "content": "", "reasoning_content": "rr",
     "tool_calls": [{"id": "i", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "i", "content": "ok"}]})");
  const auto bound = request_token_upper_bound(request);
  const std::string call = request["messages"][2]["tool_calls"][0].dump();
  std::uint64_t call_bound = 0;
  for (char c : call) call_bound += (c == ',' || c == ':') ? 2 : 1;
  // 4 (system) + 3 (user parts) + 2 (reasoning) + call + 1 (tool_call_id) + 2 (tool content)
  EXPECT_EQ(bound.text_tokens, 4u + 3u + 2u + call_bound + 1u + 2u);
  EXPECT_EQ(bound.framing_tokens, kFramingTokensPerRequest + 4 * kFramingTokensPerMessage);
  EXPECT_THROW(request_token_upper_bound(nlohmann::json::object()), std::invalid_argument);
  EXPECT_THROW(request_token_upper_bound(nlohmann::json::parse(
                   R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})")),
               std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::api
