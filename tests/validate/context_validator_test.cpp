#include "k3lab/validate/context_validator.hpp"

#include <gtest/gtest.h>

namespace k3lab::validate {
namespace {

const std::vector<std::string> kRequired = {"E00011", "E00022"};

TEST(ContextValidator, ExactNormalisedAndSoleNumber) {
  ContextVerdict v = validate_context_answer("4829137", kRequired, "ANSWER: 4829137\nEVIDENCE: E00011, E00022");
  EXPECT_TRUE(v.exact_match);
  EXPECT_TRUE(v.normalized_match);
  EXPECT_TRUE(v.passed);
  EXPECT_DOUBLE_EQ(v.evidence.coverage, 1.0);

  v = validate_context_answer("4829137", kRequired, "ANSWER: 4,829,137.\nEVIDENCE: E00011");
  EXPECT_FALSE(v.exact_match);
  EXPECT_TRUE(v.normalized_match);
  EXPECT_TRUE(v.passed);
  EXPECT_DOUBLE_EQ(v.evidence.coverage, 0.5);

  v = validate_context_answer("4829137", kRequired, "ANSWER: The catalogue number is 4829137.\nEVIDENCE: E00022");
  EXPECT_FALSE(v.normalized_match);
  EXPECT_TRUE(v.sole_number_match);
  EXPECT_TRUE(v.passed);

  v = validate_context_answer("4829137", kRequired, "ANSWER: 4829137 or 7731234\nEVIDENCE: E00011");
  EXPECT_FALSE(v.passed);

  v = validate_context_answer("4829137", kRequired, "ANSWER: 4829138\nEVIDENCE: E00011, E00022");
  EXPECT_FALSE(v.passed);
  EXPECT_DOUBLE_EQ(v.evidence.coverage, 1.0);
}

TEST(ContextValidator, NonNumericExpectationNeedsNormalisedEquality) {
  ContextVerdict v = validate_context_answer("Esme Varga", {"E00001"}, "ANSWER: esme varga.\nEVIDENCE: E1");
  EXPECT_TRUE(v.passed);
  EXPECT_DOUBLE_EQ(v.evidence.coverage, 1.0);
  v = validate_context_answer("Esme Varga", {"E00001"}, "ANSWER: It is Esme Varga\nEVIDENCE: E1");
  EXPECT_FALSE(v.passed);
}

TEST(ContextValidator, JsonCarriesEveryFlag) {
  const nlohmann::json j =
      context_verdict_json(validate_context_answer("5", {"E00001"}, "ANSWER: 5\nEVIDENCE: E00001, E00002"));
  EXPECT_EQ(j.at("passed"), true);
  EXPECT_EQ(j.at("evidence_coverage"), 1.0);
  EXPECT_EQ(j.at("cited_other"), nlohmann::json::array({"E00002"}));
  EXPECT_EQ(j.at("parsed_answer"), "5");
}

}  // namespace
}  // namespace k3lab::validate
