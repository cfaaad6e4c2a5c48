// Exact prompt counting from a tiktoken-format vocabulary, and where the vocabulary comes from.
#include <gtest/gtest.h>

#include <fstream>

#include "context_probe/cell_prompt.hpp"
#include "context_probe/prompt_tokens.hpp"
#include "k3lab/api/bpe_tokenizer.hpp"
#include "test_support.hpp"

namespace k3lab::context_probe_test {
namespace {

namespace cp = experiments::context_probe;

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], table[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += {table[v >> 18], table[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += {table[v >> 18], table[(v >> 12) & 63], table[(v >> 6) & 63], '='};
  }
  return out;
}

// Every single byte, then a few merges common in English: "th", "the", "in", "er", " t".
std::filesystem::path write_vocabulary(const std::filesystem::path& dir) {
  const auto file = dir / "toy.tiktoken";
  std::ofstream out(file);
  int rank = 0;
  for (int b = 0; b < 256; ++b) out << base64(std::string(1, static_cast<char>(b))) << " " << rank++ << "\n";
  for (const char* merge : {"th", "the", "in", "er", " t", " th", " the"}) out << base64(merge) << " " << rank++ << "\n";
  return file;
}

TEST(PromptTokens, WithoutAVocabularyTheConservativeEstimateIsUsed) {
  const auto counter = cp::make_prompt_token_counter(std::nullopt);
  EXPECT_FALSE(counter.exact);
  EXPECT_EQ(counter.estimator("abcdefg"), 3u);  // ceil(7 / 3)
  EXPECT_EQ(counter.to_json()["exact"], false);
}

TEST(PromptTokens, AVocabularyCountsExactlyAndSizesTheFixture) {
  ScratchDir dir;
  const auto file = write_vocabulary(dir.path());
  const auto counter = cp::make_prompt_token_counter(file);
  ASSERT_TRUE(counter.exact);
  EXPECT_EQ(counter.vocabulary_sha256.size(), 64u);
  EXPECT_EQ(counter.estimator.name.rfind("tiktoken:toy.tiktoken@", 0), 0u);
  const auto reference = api::BpeTokenizer::from_file(file);
  EXPECT_EQ(counter.estimator(" the other"), reference.encode_ordinary(" the other").size());
  EXPECT_LT(counter.estimator(" the other"), std::string(" the other").size());  // merges apply

  const auto p = smoke_parameters();
  const auto unit = smoke_unit("family=single/fixture=1/length=32768/stratum=cold/rep=1");
  const auto cell = cp::build_cell_prompt(p, unit.spec, "", counter.estimator);
  EXPECT_EQ(cell.budget.prompt_tokens, reference.encode_ordinary(cell.fixture.prompt).size());
  EXPECT_LE(cell.budget.prompt_tokens, static_cast<std::uint64_t>(p.haystack_tokens(32768)));
  EXPECT_EQ(cell.fixture.estimator_name, counter.estimator.name);
}

TEST(PromptTokens, TheProtocolsVocabularyWinsAndAConflictIsAnError) {
  ScopedEnv env("K3LAB_TOKENIZER_VOCAB", std::nullopt);
  auto p = smoke_parameters();
  EXPECT_FALSE(cp::configured_vocabulary(p, nlohmann::json::object()).has_value());
  EXPECT_EQ(cp::configured_vocabulary(p, {{"tokenizer_vocab", "/v/a"}}), std::filesystem::path("/v/a"));
  {
    ScopedEnv set("K3LAB_TOKENIZER_VOCAB", "/v/env");
    EXPECT_EQ(cp::configured_vocabulary(p, nlohmann::json::object()), std::filesystem::path("/v/env"));
  }
  p.tokenizer_vocab = "/v/frozen";
  EXPECT_EQ(cp::configured_vocabulary(p, nlohmann::json::object()), std::filesystem::path("/v/frozen"));
  EXPECT_EQ(cp::configured_vocabulary(p, {{"tokenizer_vocab", "/v/frozen"}}), std::filesystem::path("/v/frozen"));
  EXPECT_THROW(cp::configured_vocabulary(p, {{"tokenizer_vocab", "/v/other"}}), std::invalid_argument);
  EXPECT_THROW(cp::configured_vocabulary(smoke_parameters(), {{"tokenizer_vocab", 3}}), std::invalid_argument);
  EXPECT_THROW(cp::make_prompt_token_counter(std::filesystem::path("/nonexistent/vocab")), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::context_probe_test
