#include <gtest/gtest.h>

#include "k3lab/api/redact.hpp"

namespace k3lab::api {
namespace {

constexpr const char* kKey = "sk-abcdef1234567890wxyz";

TEST(Redact, RemovesWholeKeyEverywhere) {
  const std::string text = std::string("key=") + kKey + " again " + kKey + ".";
  const std::string out = redact(text, kKey);
  EXPECT_EQ(out.find(kKey), std::string::npos);
  EXPECT_EQ(out, "key=[REDACTED] again [REDACTED].");
}

TEST(Redact, RemovesMaskedAndPartialEchoes) {
  const std::string out = redact("Incorrect API key provided: sk-abcdef12****wxyz. Check it.", kKey);
  EXPECT_EQ(out, "Incorrect API key provided: [REDACTED]****wxyz. Check it.");
  EXPECT_EQ(redact("tail 1234567890wxyz here", kKey), "tail [REDACTED] here");
}

TEST(Redact, LeavesUnrelatedTextAlone) {
  const std::string text = "HTTP 401: invalid_authentication_error for model kimi-k3 (request mock-req-3)";
  EXPECT_EQ(redact(text, kKey), text);
  EXPECT_EQ(redact(text, ""), text);
}

TEST(Redact, ShortSecretsOnlyAsWholeOccurrences) {
  EXPECT_EQ(redact("abc abcd xabcx", "abc"), "[REDACTED] [REDACTED]d x[REDACTED]x");
}

}  // namespace
}  // namespace k3lab::api
