#include "k3lab/validate/context_reader.hpp"

#include <gtest/gtest.h>

#include "k3lab/validate/context_fixture.hpp"
#include "k3lab/validate/context_validator.hpp"

namespace k3lab::validate {
namespace {

FixtureRequest reader_request(FixtureFamily family, int index, std::size_t target, std::string prefix = "reader") {
  FixtureRequest request;
  request.seed = 77;
  request.family = family;
  request.index = index;
  request.target_tokens = target;
  request.prefix_id = std::move(prefix);
  return request;
}

ReaderConfig perfect_reader() {
  ReaderConfig config;
  config.base_failure = 0.0;
  config.max_failure = 0.0;
  return config;
}

ReaderConfig always_failing_reader() {
  ReaderConfig config;
  config.base_failure = 1.0;
  config.max_failure = 1.0;
  return config;
}

TEST(ContextReader, PerfectReaderSolvesEveryFixtureWithFullCoverage) {
  for (FixtureFamily family : kFixtureFamilies) {
    for (int index = 0; index < kFixturesPerFamily; ++index) {
      SCOPED_TRACE(fixture_id(family, index));
      const ContextFixture f = generate_context_fixture(reader_request(family, index, 8192));
      const ReaderReply reply = read_fixture_prompt(f.prompt, perfect_reader());
      EXPECT_TRUE(reply.understood);
      EXPECT_FALSE(reply.recall_failed);
      const ContextVerdict verdict = validate_context_answer(f, reply.text);
      EXPECT_TRUE(verdict.exact_match) << reply.text << "\nexpected " << f.expected_answer;
      EXPECT_DOUBLE_EQ(verdict.evidence.coverage, 1.0) << reply.text;
      EXPECT_TRUE(verdict.evidence.cited_other.empty()) << reply.text;
      // Distance: from the first required section to the question.
      EXPECT_NEAR(static_cast<double>(reply.distance_tokens), static_cast<double>(f.required_span_tokens), 2.0);
    }
  }
}

TEST(ContextReader, FailingReaderTakesACompetitorAndFailsTheValidator) {
  for (FixtureFamily family : kFixtureFamilies) {
    for (int index = 0; index < kFixturesPerFamily; ++index) {
      SCOPED_TRACE(fixture_id(family, index));
      const ContextFixture f = generate_context_fixture(reader_request(family, index, 8192));
      const ReaderReply reply = read_fixture_prompt(f.prompt, always_failing_reader());
      EXPECT_TRUE(reply.recall_failed);
      const ContextVerdict verdict = validate_context_answer(f, reply.text);
      EXPECT_FALSE(verdict.passed) << reply.text;
      if (family == FixtureFamily::distractor_retrieval) {
        // The confused answer is one of the near-miss values (not made up).
        bool competitor = false;
        for (const auto& value : f.family_details.at("competitor_values")) {
          competitor = competitor || verdict.parsed.answer == value.get<std::string>();
        }
        EXPECT_TRUE(competitor) << reply.text;
      }
      if (family == FixtureFamily::repository) {
        EXPECT_EQ(verdict.parsed.answer,
                  std::to_string(f.family_details.at("answer_if_decoy_base_used").get<long long>()));
      }
    }
  }
}

TEST(ContextReader, EveryRequiredSectionIsNecessary) {
  // Blanking any one required section makes the (perfect) reader's answer wrong: the required
  // evidence really is required.
  for (FixtureFamily family : kFixtureFamilies) {
    for (int index : {0, 3, 7}) {
      const ContextFixture f = generate_context_fixture(reader_request(family, index, 8192));
      for (const auto& p : f.placements) {
        if (!p.required) continue;
        SCOPED_TRACE(fixture_id(family, index) + " without " + p.evidence_id);
        std::string edited = f.prompt;
        edited.replace(p.byte_offset + 9, p.text.size(), "The quiet lantern rested beside the pond.\n");
        const ReaderReply reply = read_fixture_prompt(edited, perfect_reader());
        EXPECT_FALSE(validate_context_answer(f, reply.text).passed) << reply.text;
      }
    }
  }
}

TEST(ContextReader, ReadsThePromptNotTheGroundTruth) {
  const ContextFixture f = generate_context_fixture(reader_request(FixtureFamily::single_retrieval, 3, 8192));
  std::string edited = f.prompt;
  const std::size_t at = edited.find(f.placements.front().text);
  const std::string old_sentence = f.placements.front().text;
  std::string new_sentence = old_sentence;
  new_sentence.replace(new_sentence.find(f.expected_answer), f.expected_answer.size(), "1234567");
  edited.replace(at, old_sentence.size(), new_sentence);
  const ReaderReply reply = read_fixture_prompt(edited, perfect_reader());
  EXPECT_NE(reply.text.find("ANSWER: 1234567"), std::string::npos) << reply.text;
}

TEST(ContextReader, UnrecognisedPromptsGetAPoliteNonAnswer) {
  ReaderReply reply = read_fixture_prompt("hello", perfect_reader());
  EXPECT_FALSE(reply.understood);
  EXPECT_NE(reply.text.find("ANSWER:"), std::string::npos);
  reply = read_fixture_prompt("=== DOCUMENT START ===\n[E00001] x\n=== DOCUMENT END ===\n\nQUESTION: why?\n",
                              perfect_reader());
  EXPECT_FALSE(reply.understood);
}

TEST(ContextReader, FailureProbabilityCurve) {
  ReaderConfig config;
  config.base_failure = 0.1;
  config.max_failure = 0.7;
  config.distance_scale_tokens = 1000;
  EXPECT_DOUBLE_EQ(reader_failure_probability(config, 0), 0.1);
  EXPECT_NEAR(reader_failure_probability(config, 1000), 0.1 + 0.6 * (1 - std::exp(-1.0)), 1e-12);
  EXPECT_NEAR(reader_failure_probability(config, 100000), 0.7, 1e-9);
  double previous = 0;
  for (std::size_t d = 0; d < 5000; d += 250) {
    const double p = reader_failure_probability(config, d);
    EXPECT_GE(p, previous);
    previous = p;
  }
  config.base_failure = 0.8;
  EXPECT_THROW(reader_failure_probability(config, 0), std::invalid_argument);
  config.base_failure = 0.1;
  config.distance_scale_tokens = 0;
  EXPECT_THROW(reader_failure_probability(config, 0), std::invalid_argument);
}

TEST(ContextReader, RecallDropsAsEvidenceMovesApart) {
  ReaderConfig config;
  config.seed = 5;
  config.base_failure = 0.0;
  config.max_failure = 0.9;
  config.distance_scale_tokens = 8000;
  const int repetitions = 120;
  auto failure_rate = [&](int index) {
    int failures = 0;
    double expected = 0;
    for (int r = 0; r < repetitions; ++r) {
      const ContextFixture f =
          generate_context_fixture(reader_request(FixtureFamily::single_retrieval, index, 8192, "cold-" + std::to_string(r)));
      const ReaderReply reply = read_fixture_prompt(f.prompt, config);
      failures += reply.recall_failed ? 1 : 0;
      expected += reply.failure_probability;
      EXPECT_EQ(reply.recall_failed, !validate_context_answer(f, reply.text).passed);
    }
    // The empirical rate follows the configured curve (binomial sd <= 0.046 at n = 120).
    EXPECT_NEAR(failures / static_cast<double>(repetitions), expected / repetitions, 0.15);
    return failures / static_cast<double>(repetitions);
  };
  // Index 0 puts the fact next to the question (p ~ 0.04), index 7 far from it (p ~ 0.56).
  const double near = failure_rate(0);
  const double far = failure_rate(7);
  EXPECT_LT(near + 0.3, far);
}

TEST(ContextReader, SamePromptSameReply) {
  const ContextFixture f = generate_context_fixture(reader_request(FixtureFamily::order_state, 6, 8192));
  ReaderConfig config;
  config.max_failure = 0.5;
  EXPECT_EQ(read_fixture_prompt(f.prompt, config).text, read_fixture_prompt(f.prompt, config).text);
}

}  // namespace
}  // namespace k3lab::validate
