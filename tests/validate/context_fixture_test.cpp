#include "k3lab/validate/context_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <set>

#include "k3lab/core/sha256.hpp"
#include "k3lab/validate/cache_buster.hpp"
#include "k3lab/validate/describe_fixture.hpp"
#include "k3lab/validate/placement_rule.hpp"
#include "k3lab/validate/prompt_format.hpp"

namespace k3lab::validate {
namespace {

constexpr std::uint64_t kSeed = 20260803;

FixtureRequest request_for(FixtureFamily family, int index, std::size_t target, std::string prefix = "p-0") {
  FixtureRequest request;
  request.seed = kSeed;
  request.family = family;
  request.index = index;
  request.target_tokens = target;
  request.prefix_id = std::move(prefix);
  return request;
}

// Independent of the library's estimator object: the documented formula ceil(bytes / 3).
std::size_t byte_bound(std::string_view text) { return (text.size() + 2) / 3; }

struct SectionLine {
  std::string id;
  std::size_t offset;
};

// Every "[Exxxxx] " line start inside the document body.
std::vector<SectionLine> section_lines(const std::string& prompt) {
  std::vector<SectionLine> out;
  const std::size_t begin = prompt.find(kDocumentStartMarker);
  const std::size_t end = prompt.find(kDocumentEndMarker);
  std::size_t pos = prompt.find('\n', begin) + 1;
  while (pos < end) {
    if (prompt.compare(pos, 2, "[E") == 0 && prompt.compare(pos + 7, 2, "] ") == 0) {
      out.push_back({prompt.substr(pos + 1, 6), pos});
    }
    pos = prompt.find('\n', pos) + 1;
  }
  return out;
}

TEST(ContextFixture, DeterministicForTheSameRequest) {
  for (FixtureFamily family : kFixtureFamilies) {
    const ContextFixture a = generate_context_fixture(request_for(family, 3, 8192));
    const ContextFixture b = generate_context_fixture(request_for(family, 3, 8192));
    EXPECT_EQ(a.prompt, b.prompt);
    EXPECT_EQ(a.expected_answer, b.expected_answer);
    EXPECT_EQ(a.required_evidence, b.required_evidence);
  }
}

TEST(ContextFixture, HitsTheTokenTargetFromBelow) {
  for (FixtureFamily family : kFixtureFamilies) {
    for (int index : {0, 4, 7}) {
      for (std::size_t target : {std::size_t{4096}, std::size_t{20000}, std::size_t{65536}}) {
        SCOPED_TRACE(fixture_id(family, index) + " @ " + std::to_string(target));
        const ContextFixture f = generate_context_fixture(request_for(family, index, target));
        EXPECT_EQ(f.prompt_tokens, byte_bound(f.prompt));
        EXPECT_LE(f.prompt_tokens, target);
        EXPECT_GE(f.prompt_tokens + 8, target);  // within one filler word
      }
    }
  }
}

TEST(ContextFixture, MillionTokenFixtureFitsItsBudget) {
  const ContextFixture f = generate_context_fixture(request_for(FixtureFamily::multi_hop, 7, 1048576));
  EXPECT_LE(byte_bound(f.prompt), 1048576u);
  EXPECT_GE(byte_bound(f.prompt) + 8, 1048576u);
  EXPECT_GT(f.section_count, 1000u);
}

TEST(ContextFixture, CustomNonAdditiveEstimatorIsRespected) {
  // Words plus two tokens per line break: not additive over sections and unlike the byte bound.
  auto count = [](std::string_view text) {
    std::size_t tokens = 0;
    bool in_word = false;
    for (char c : text) {
      const bool space = c == ' ' || c == '\n' || c == '\t';
      if (!space && !in_word) ++tokens;
      if (c == '\n') tokens += 2;
      in_word = !space;
    }
    return tokens;
  };
  for (FixtureFamily family : {FixtureFamily::order_state, FixtureFamily::repository}) {
    FixtureRequest request = request_for(family, 2, 12000);
    request.estimator = custom_token_estimator("words+lines", count);
    const ContextFixture f = generate_context_fixture(request);
    EXPECT_EQ(f.estimator_name, "words+lines");
    EXPECT_EQ(f.prompt_tokens, count(f.prompt));
    EXPECT_LE(f.prompt_tokens, 12000u);
    EXPECT_GE(f.prompt_tokens + 4, 12000u);
  }
}

TEST(ContextFixture, FactsAndIdsAreStableAcrossLengths) {
  for (FixtureFamily family : kFixtureFamilies) {
    const ContextFixture small = generate_context_fixture(request_for(family, 5, 6000));
    const ContextFixture large = generate_context_fixture(request_for(family, 5, 90000));
    EXPECT_EQ(small.question, large.question);
    EXPECT_EQ(small.expected_answer, large.expected_answer);
    EXPECT_EQ(small.required_evidence, large.required_evidence);
    EXPECT_EQ(small.derivation, large.derivation);
    EXPECT_GT(large.required_span_tokens, small.required_span_tokens);
  }
}

TEST(ContextFixture, CacheBusterIsFirstAndOnlyChangesTheFirstLine) {
  const ContextFixture a = generate_context_fixture(request_for(FixtureFamily::distractor_retrieval, 1, 8192, "cold-1"));
  const ContextFixture b = generate_context_fixture(request_for(FixtureFamily::distractor_retrieval, 1, 8192, "cold-2"));
  const ContextFixture none = generate_context_fixture(request_for(FixtureFamily::distractor_retrieval, 1, 8192, ""));
  const std::string first_a = a.prompt.substr(0, a.prompt.find('\n'));
  EXPECT_EQ(first_a, cache_buster_line("cold-1"));
  EXPECT_EQ(a.cache_buster_line, first_a);
  EXPECT_NE(first_a, b.prompt.substr(0, b.prompt.find('\n')));
  EXPECT_EQ(a.prompt.substr(a.prompt.find('\n')), b.prompt.substr(b.prompt.find('\n')));
  EXPECT_TRUE(none.cache_buster_line.empty());
  EXPECT_EQ(none.prompt.rfind(std::string(kPromptInstructions).substr(0, 30), 0), 0u);
  EXPECT_THROW(cache_buster_line(""), std::invalid_argument);
  // Neutral: no digits that could be mistaken for a fact, fixed length.
  EXPECT_EQ(cache_buster_line("x").size(), cache_buster_line("a much longer prefix id").size());
}

TEST(ContextFixture, SectionsHaveUniqueIdsAndPlacementsPointAtThem) {
  for (FixtureFamily family : kFixtureFamilies) {
    const ContextFixture f = generate_context_fixture(request_for(family, 6, 30000));
    const std::vector<SectionLine> lines = section_lines(f.prompt);
    EXPECT_EQ(lines.size(), f.section_count);
    std::set<std::string> ids;
    for (const auto& line : lines) EXPECT_TRUE(ids.insert(line.id).second) << line.id;
    std::size_t required = 0;
    for (const auto& p : f.placements) {
      ASSERT_EQ(f.prompt.compare(p.byte_offset, 9 + p.text.size(), "[" + p.evidence_id + "] " + p.text), 0);
      EXPECT_EQ(p.token_offset, byte_bound(std::string_view(f.prompt).substr(0, p.byte_offset)));
      if (p.required) ++required;
    }
    EXPECT_EQ(required, f.required_evidence.size());
    for (std::size_t k = 1; k < f.placements.size(); ++k) {
      EXPECT_LT(f.placements[k - 1].byte_offset, f.placements[k].byte_offset);
    }
    for (const auto& id : f.required_evidence) EXPECT_NE(f.derivation.find(id), std::string::npos) << id;
  }
}

TEST(ContextFixture, PlacementFollowsTheRuleAndSpreadGrowsWithIndex) {
  for (FixtureFamily family : kFixtureFamilies) {
    std::size_t previous_span = 0;
    for (int index = 0; index < kFixturesPerFamily; ++index) {
      SCOPED_TRACE(fixture_id(family, index));
      const ContextFixture f = generate_context_fixture(request_for(family, index, 65536));
      for (const auto& p : f.placements) EXPECT_NEAR(p.depth, p.target_depth, 0.02) << p.label;
      EXPECT_GT(f.required_span_tokens, previous_span);
      previous_span = f.required_span_tokens;
      // The first required section's distance to the question follows the rule.
      const std::vector<double> depths =
          required_depths(family, index, static_cast<int>(f.required_evidence.size()));
      const double body = static_cast<double>(f.body_token_end - f.body_token_begin);
      EXPECT_NEAR(static_cast<double>(f.required_span_tokens) / body, 1.0 - depths.front(), 0.03);
    }
  }
}

TEST(ContextFixture, ProseFillerHasNoDigitsAndFactsDo) {
  const ContextFixture f = generate_context_fixture(request_for(FixtureFamily::single_retrieval, 2, 16000));
  const std::size_t body_begin = f.prompt.find(kDocumentStartMarker);
  const std::size_t body_end = f.prompt.find(kDocumentEndMarker);
  std::string filler = f.prompt.substr(body_begin, body_end - body_begin);
  for (const auto& p : f.placements) {
    const std::size_t at = filler.find(p.text);
    ASSERT_NE(at, std::string::npos);
    filler.erase(at, p.text.size());
  }
  filler = std::regex_replace(filler, std::regex("\\[E[0-9]{5}\\]"), "");
  EXPECT_EQ(filler.find_first_of("0123456789"), std::string::npos);
  EXPECT_NE(f.placements.front().text.find(f.expected_answer), std::string::npos);
  EXPECT_EQ(f.filler.generator, "k3lab-neutral-prose");
  EXPECT_NE(f.filler.license.find("MIT"), std::string::npos);
}

TEST(ContextFixture, OrderStateAnswerDependsOnOrder) {
  for (int index = 0; index < kFixturesPerFamily; ++index) {
    const ContextFixture f = generate_context_fixture(request_for(FixtureFamily::order_state, index, 6000));
    const long long reversed = f.family_details.at("answer_if_later_events_reversed").get<long long>();
    EXPECT_NE(std::to_string(reversed), f.expected_answer);
    EXPECT_EQ(f.required_evidence.size(), 5u);
    // Hand-check against the recorded steps: the last balance is the answer.
    EXPECT_EQ(std::to_string(f.family_details.at("steps").back().at("balance").get<long long>()), f.expected_answer);
  }
}

TEST(ContextFixture, RepositoryProvenanceHashesTheFilesInTheDocument) {
  const ContextFixture f = generate_context_fixture(request_for(FixtureFamily::repository, 4, 20000));
  ASSERT_TRUE(f.repository.has_value());
  EXPECT_TRUE(f.repository->synthetic);
  EXPECT_EQ(f.repository->generator, "k3lab-pseudo-repo");
  EXPECT_EQ(f.repository->generator_version, 1);
  // Recompute the hash from the prompt text: every section is "FILE: <path>\n<content>".
  std::vector<SnapshotFile> files;
  const std::vector<SectionLine> lines = section_lines(f.prompt);
  const std::size_t end = f.prompt.find(kDocumentEndMarker);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const std::size_t body = lines[k].offset + 9;
    const std::size_t stop = k + 1 < lines.size() ? lines[k + 1].offset : end;
    const std::string section = f.prompt.substr(body, stop - body);
    ASSERT_EQ(section.rfind("FILE: ", 0), 0u);
    const std::size_t newline = section.find('\n');
    files.push_back({section.substr(6, newline - 6), section.substr(newline + 1, section.size() - newline - 2)});
  }
  EXPECT_EQ(f.repository->file_count, files.size());
  EXPECT_EQ(f.repository->sha256, repository_files_sha256(files));
  EXPECT_EQ(f.repository->sha256.size(), 64u);
}

TEST(ContextFixture, RejectsBadRequestsWithActionableMessages) {
  EXPECT_THROW(generate_context_fixture(request_for(FixtureFamily::multi_hop, 8, 8192)), std::invalid_argument);
  EXPECT_THROW(generate_context_fixture(request_for(FixtureFamily::multi_hop, -1, 8192)), std::invalid_argument);
  EXPECT_THROW(generate_context_fixture(request_for(FixtureFamily::multi_hop, 0, kMaxFixtureTargetTokens + 1)),
               std::invalid_argument);
  try {
    generate_context_fixture(request_for(FixtureFamily::repository, 0, 300));
    FAIL() << "a 300-token target cannot hold the repository fixture";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("target_tokens >="), std::string::npos) << e.what();
  }
  FixtureRequest no_estimator = request_for(FixtureFamily::multi_hop, 0, 8192);
  no_estimator.estimator.count = nullptr;
  EXPECT_THROW(generate_context_fixture(no_estimator), std::invalid_argument);
  EXPECT_THROW(conservative_byte_estimator(0.5), std::invalid_argument);
  EXPECT_THROW(custom_token_estimator("x", nullptr), std::invalid_argument);
  EXPECT_THROW(parse_fixture_family("needle"), std::invalid_argument);
  EXPECT_EQ(parse_fixture_family("order-state"), FixtureFamily::order_state);
}

TEST(ContextFixture, PromptBudgetReservesCompletionAndFraming) {
  EXPECT_EQ(prompt_token_budget(1048576, 32768, 64), 1048576u - 32768u - 64u);
  EXPECT_THROW(prompt_token_budget(1000, 990, 10), std::invalid_argument);
}

TEST(ContextFixture, DescriptionCarriesTheGroundTruth) {
  const ContextFixture f = generate_context_fixture(request_for(FixtureFamily::repository, 1, 9000));
  const nlohmann::json d = describe_fixture(f);
  EXPECT_EQ(d.at("fixture"), "repository/1");
  EXPECT_EQ(d.at("expected_answer"), f.expected_answer);
  EXPECT_EQ(d.at("required_evidence").size(), 3u);
  EXPECT_EQ(d.at("placements").size(), f.placements.size());
  EXPECT_EQ(d.at("prompt_sha256"), core::sha256_hex(f.prompt));
  EXPECT_EQ(d.at("repository").at("synthetic"), true);
  EXPECT_EQ(d.at("filler").at("generator"), "k3lab-pseudo-repo");
  EXPECT_FALSE(d.contains("prompt"));
  EXPECT_EQ(describe_fixture(f, {true}).at("prompt"), f.prompt);
}

}  // namespace
}  // namespace k3lab::validate
