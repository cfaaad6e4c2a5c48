#include "k3lab/validate/answer_normalize.hpp"

#include <gtest/gtest.h>

namespace k3lab::validate {
namespace {

TEST(AnswerNormalize, DocumentedExamples) {
  EXPECT_EQ(normalize_answer("  **4,829,137.** "), "4829137");
  EXPECT_EQ(normalize_answer("$1,250.00"), "1250.00");
  EXPECT_EQ(normalize_answer("Esme Varga."), "esme varga");
  EXPECT_EQ(normalize_answer("ACC-102"), "acc-102");
  EXPECT_EQ(normalize_answer("-5"), "-5");
  EXPECT_EQ(normalize_answer("\"Hello,\tWorld!\"\n"), "hello world");
  EXPECT_EQ(normalize_answer("`3.14`"), "3.14");
  EXPECT_EQ(normalize_answer("end."), "end");
  EXPECT_EQ(normalize_answer(""), "");
  EXPECT_EQ(normalize_answer(" - "), "");
}

TEST(AnswerNormalize, MatchesRespectNormalisationButNotMore) {
  EXPECT_TRUE(exact_answer_match("4829137", "  4829137\n"));
  EXPECT_FALSE(exact_answer_match("4829137", "4,829,137"));
  EXPECT_TRUE(normalized_answer_match("4829137", "4,829,137."));
  EXPECT_TRUE(normalized_answer_match("Esme Varga", "esme  VARGA"));
  EXPECT_FALSE(normalized_answer_match("4829137", "4829138"));
  EXPECT_FALSE(normalized_answer_match("", ""));
  EXPECT_FALSE(normalized_answer_match("55", "55 credits"));
}

TEST(AnswerNormalize, PhraseContainmentUsesWordBoundaries) {
  EXPECT_TRUE(contains_normalized_phrase("Transferred. RESULT: 1,250.00 USD", "1250.00"));
  EXPECT_FALSE(contains_normalized_phrase("balance 11250.00", "1250.00"));
  EXPECT_FALSE(contains_normalized_phrase("ACC-1020", "acc-102"));
  EXPECT_TRUE(contains_normalized_phrase("holder: Esme Varga!", "esme varga"));
  EXPECT_FALSE(contains_normalized_phrase("anything", ""));
}

TEST(AnswerNormalize, NumberTokens) {
  EXPECT_EQ(number_tokens("The value is 4,829,137 (was -12.5)."), (std::vector<std::string>{"4829137", "-12.5"}));
  EXPECT_TRUE(number_tokens("no digits here").empty());
  EXPECT_TRUE(number_tokens("acc-102").empty());
}

}  // namespace
}  // namespace k3lab::validate
