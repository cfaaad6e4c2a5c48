// MQAR and needle generation (structure, determinism) and exact-match scoring against examples
// built by hand.
#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "hybrid_attention/retrieval_task.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

TEST(RetrievalScore, HandMadeExample) {
  // tokens:      K  V1 V2 x  K  V1 V2
  // position:    0  1  2  3  4  5  6      answer at 5..6; predictions at 4 and 5 must be V1, V2.
  RetrievalExample ex{"mqar", 7, {50, 11, 12, 99, 50, 11, 12}, {{5, 2, 4}}};
  std::vector<std::int64_t> right = {0, 0, 0, 0, 11, 12, 0};
  auto s = score_retrieval(ex, right);
  EXPECT_EQ(s.queries, 1);
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.tokens_correct, 2);
  EXPECT_DOUBLE_EQ(s.accuracy(), 1.0);

  std::vector<std::int64_t> half = {0, 0, 0, 0, 11, 13, 0};  // second value token wrong
  s = score_retrieval(ex, half);
  EXPECT_EQ(s.correct, 0);
  EXPECT_EQ(s.tokens_correct, 1);

  std::vector<std::int64_t> shifted = {0, 0, 0, 0, 0, 11, 12};  // predicting the current token is wrong
  EXPECT_EQ(score_retrieval(ex, shifted).correct, 0);

  std::vector<std::int64_t> short_predictions = {0, 0, 0};
  EXPECT_THROW(score_retrieval(ex, short_predictions), std::invalid_argument);
}

TEST(RetrievalScore, Accumulates) {
  RetrievalScore a{2, 1, 4, 3}, b{3, 3, 6, 6};
  a += b;
  EXPECT_EQ(a.queries, 5);
  EXPECT_EQ(a.correct, 4);
  EXPECT_DOUBLE_EQ(a.accuracy(), 0.8);
}

TEST(TaskVocabulary, PoolsAreDisjoint) {
  for (const auto& [tokenizer, vocab] : std::vector<std::pair<std::string, std::int64_t>>{{"bytes", 256}, {"gpt2", 50304}, {"custom", 1000}}) {
    const auto v = task_vocabulary(tokenizer, vocab);
    std::set<std::int64_t> all;
    all.insert(v.keys.begin(), v.keys.end());
    all.insert(v.values.begin(), v.values.end());
    all.insert(v.filler.begin(), v.filler.end());
    EXPECT_EQ(all.size(), v.keys.size() + v.values.size() + v.filler.size()) << tokenizer;
    EXPECT_LT(*all.rbegin(), tokenizer == "gpt2" ? 50257 : vocab) << tokenizer;
  }
  const auto bytes = task_vocabulary("bytes", 256);
  EXPECT_EQ(bytes.keys.front(), 'A');
  EXPECT_EQ(bytes.values.back(), '9');
}

TEST(Mqar, StructureMatchesTheDefinitions) {
  const auto vocab = task_vocabulary("bytes", 256);
  const MqarSpec spec{256, 4, 3, 2};
  const auto ex = make_mqar_example(spec, vocab, 3001, 0);
  ASSERT_EQ(ex.length, 256);
  ASSERT_EQ(ex.tokens.size(), 256u);
  ASSERT_EQ(ex.queries.size(), 4u);
  // Definitions: key (3 tokens from A-Z) then value (2 digits), four times from position 0.
  std::set<std::vector<std::int64_t>> keys;
  for (int p = 0; p < 4; ++p) {
    std::vector<std::int64_t> key(ex.tokens.begin() + p * 5, ex.tokens.begin() + p * 5 + 3);
    for (auto t : key) EXPECT_TRUE(t >= 'A' && t <= 'Z');
    keys.insert(key);
  }
  EXPECT_EQ(keys.size(), 4u);
  // Filler between definitions and queries comes from the filler pool.
  for (int i = 20; i < 256 - 20; ++i) EXPECT_TRUE((ex.tokens[i] >= 'a' && ex.tokens[i] <= 'z') || ex.tokens[i] == ' ');
  // Every query: its key precedes the answer, and the answer equals the value defined after that key.
  for (const auto& q : ex.queries) {
    EXPECT_GE(q.answer_start, 256 - 20);
    const std::vector<std::int64_t> key(ex.tokens.begin() + q.answer_start - 3, ex.tokens.begin() + q.answer_start);
    const auto defined = q.answer_start - q.distance;
    EXPECT_EQ(std::vector<std::int64_t>(ex.tokens.begin() + defined - 3, ex.tokens.begin() + defined), key);
    EXPECT_EQ(std::vector<std::int64_t>(ex.tokens.begin() + defined, ex.tokens.begin() + defined + 2),
              std::vector<std::int64_t>(ex.tokens.begin() + q.answer_start, ex.tokens.begin() + q.answer_start + 2));
    EXPECT_GT(q.distance, 256 - 40);
  }
  // A perfect copier scores 1.0 (predictions = next tokens).
  std::vector<std::int64_t> oracle(ex.tokens.begin() + 1, ex.tokens.end());
  oracle.push_back(0);
  EXPECT_DOUBLE_EQ(score_retrieval(ex, oracle).accuracy(), 1.0);
}

TEST(Mqar, FixedBySeedLengthAndIndex) {
  const auto vocab = task_vocabulary("gpt2", 50304);
  const MqarSpec spec{128, mqar_pairs_for_length(128), 3, 2};
  EXPECT_EQ(spec.pairs, 2);
  const auto a = make_mqar_example(spec, vocab, 3001, 5);
  const auto b = make_mqar_example(spec, vocab, 3001, 5);
  const auto c = make_mqar_example(spec, vocab, 3001, 6);
  const auto d = make_mqar_example(spec, vocab, 3002, 5);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_NE(a.tokens, c.tokens);
  EXPECT_NE(a.tokens, d.tokens);
  EXPECT_EQ(mqar_pairs_for_length(64000), 32);
  EXPECT_EQ(mqar_pairs_for_length(10), 1);
  EXPECT_THROW(make_mqar_example({8, 2, 3, 2}, vocab, 1, 0), std::invalid_argument);
}

TEST(Needle, InsertedIntoTheHaystackAndQueriedAtTheEnd) {
  const auto vocab = task_vocabulary("bytes", 256);
  std::vector<std::int64_t> haystack(300);
  std::iota(haystack.begin(), haystack.end(), 1000);  // distinguishable from key/value tokens
  const auto ex = make_needle_example({200, 3, 2}, vocab, haystack, 3001, 1);
  ASSERT_EQ(ex.tokens.size(), 200u);
  ASSERT_EQ(ex.queries.size(), 1u);
  const auto& q = ex.queries[0];
  EXPECT_EQ(q.answer_start, 198);
  const auto value_at = q.answer_start - q.distance;
  const auto needle_start = value_at - 3;
  EXPECT_GE(needle_start, 0);
  EXPECT_LE(needle_start, (200 - 10) / 2);  // depth in the first half
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ex.tokens[needle_start + i], ex.tokens[195 + i]);
  int changed = 0;
  for (int i = 0; i < 200; ++i) changed += ex.tokens[i] != haystack[i] ? 1 : 0;
  EXPECT_EQ(changed, 10);  // the needle and the query, nothing else
  EXPECT_EQ(make_needle_example({200, 3, 2}, vocab, haystack, 3001, 1).tokens, ex.tokens);
  std::vector<std::int64_t> short_haystack(100);
  EXPECT_THROW(make_needle_example({200, 3, 2}, vocab, short_haystack, 3001, 1), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::experiments::hybrid_attention
