#include "hybrid_attention/retrieval_task.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

#include "k3lab/core/rng.hpp"

namespace k3lab::experiments::hybrid_attention {
namespace {

constexpr std::int64_t kGpt2RealTokens = 50257;

std::vector<std::int64_t> id_range(std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(end - begin));
  std::iota(ids.begin(), ids.end(), begin);
  return ids;
}

std::int64_t pick(core::Rng& rng, const std::vector<std::int64_t>& pool) {
  return pool[static_cast<std::size_t>(rng.below(pool.size()))];
}

std::vector<std::int64_t> draw(core::Rng& rng, const std::vector<std::int64_t>& pool, std::int64_t n) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (auto& t : out) t = pick(rng, pool);
  return out;
}

void check_spec(const char* task, std::int64_t length, std::int64_t key_tokens, std::int64_t value_tokens,
                std::int64_t needed) {
  if (key_tokens < 1 || value_tokens < 1) {
    throw std::invalid_argument(std::string(task) + ": key_tokens and value_tokens must be at least 1");
  }
  if (length < needed) {
    throw std::invalid_argument(std::string(task) + ": length " + std::to_string(length) + " is too short; it needs " +
                                std::to_string(needed) + " tokens for its definitions and queries");
  }
}

std::uint64_t task_stream(std::uint64_t task_seed, const char* task, std::int64_t length, std::int64_t index) {
  return core::stream_seed(task_seed, {core::fnv1a64(task), static_cast<std::uint64_t>(length),
                                       static_cast<std::uint64_t>(index)});
}

}  // namespace

TaskVocabulary task_vocabulary(const std::string& tokenizer, std::int64_t vocab_size) {
  TaskVocabulary v;
  if (tokenizer == "bytes") {
    if (vocab_size < 128) throw std::invalid_argument("task vocabulary: byte tokens need vocab_size >= 128");
    v.keys = id_range('A', 'Z' + 1);
    v.values = id_range('0', '9' + 1);
    v.filler = id_range('a', 'z' + 1);
    v.filler.push_back(' ');
    return v;
  }
  const std::int64_t usable = tokenizer == "gpt2" ? std::min(vocab_size, kGpt2RealTokens) : vocab_size;
  if (usable < 16) throw std::invalid_argument("task vocabulary: vocab_size " + std::to_string(vocab_size) + " is too small");
  const std::int64_t quarter = usable / 4;
  const std::int64_t third = (usable - quarter) / 3;
  v.keys = id_range(quarter, quarter + third);
  v.values = id_range(quarter + third, quarter + 2 * third);
  v.filler = id_range(quarter + 2 * third, quarter + 3 * third);
  return v;
}

std::int64_t mqar_pairs_for_length(std::int64_t length) { return std::clamp<std::int64_t>(length / 64, 1, 32); }

RetrievalExample make_mqar_example(const MqarSpec& spec, const TaskVocabulary& vocab, std::uint64_t task_seed,
                                   std::int64_t index) {
  const std::int64_t item = spec.key_tokens + spec.value_tokens;
  if (spec.pairs < 1) throw std::invalid_argument("mqar: pairs must be at least 1");
  check_spec("mqar", spec.length, spec.key_tokens, spec.value_tokens, 2 * spec.pairs * item);
  double distinct_keys = 1;
  for (std::int64_t i = 0; i < spec.key_tokens; ++i) distinct_keys *= static_cast<double>(vocab.keys.size());
  if (distinct_keys < static_cast<double>(spec.pairs)) {
    throw std::invalid_argument("mqar: the key pool cannot make " + std::to_string(spec.pairs) +
                                " distinct keys; use more key tokens");
  }
  core::Rng rng(task_stream(task_seed, "mqar", spec.length, index));
  std::vector<std::vector<std::int64_t>> keys, values;
  std::set<std::vector<std::int64_t>> seen;
  while (static_cast<std::int64_t>(keys.size()) < spec.pairs) {
    auto key = draw(rng, vocab.keys, spec.key_tokens);
    if (!seen.insert(key).second) continue;
    keys.push_back(std::move(key));
    values.push_back(draw(rng, vocab.values, spec.value_tokens));
  }
  RetrievalExample ex;
  ex.task = "mqar";
  ex.length = spec.length;
  ex.tokens.reserve(static_cast<std::size_t>(spec.length));
  std::vector<std::int64_t> defined_at(static_cast<std::size_t>(spec.pairs));
  for (std::int64_t p = 0; p < spec.pairs; ++p) {
    ex.tokens.insert(ex.tokens.end(), keys[p].begin(), keys[p].end());
    defined_at[p] = static_cast<std::int64_t>(ex.tokens.size());
    ex.tokens.insert(ex.tokens.end(), values[p].begin(), values[p].end());
  }
  const std::int64_t query_start = spec.length - spec.pairs * item;
  while (static_cast<std::int64_t>(ex.tokens.size()) < query_start) ex.tokens.push_back(pick(rng, vocab.filler));
  std::vector<std::int64_t> order(static_cast<std::size_t>(spec.pairs));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  for (std::int64_t i = spec.pairs - 1; i > 0; --i) {
    std::swap(order[i], order[static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i + 1)))]);
  }
  for (auto p : order) {
    ex.tokens.insert(ex.tokens.end(), keys[p].begin(), keys[p].end());
    const auto answer = static_cast<std::int64_t>(ex.tokens.size());
    ex.tokens.insert(ex.tokens.end(), values[p].begin(), values[p].end());
    ex.queries.push_back({answer, spec.value_tokens, answer - defined_at[p]});
  }
  return ex;
}

RetrievalExample make_needle_example(const NeedleSpec& spec, const TaskVocabulary& vocab,
                                     std::span<const std::int64_t> haystack, std::uint64_t task_seed,
                                     std::int64_t index) {
  const std::int64_t item = spec.key_tokens + spec.value_tokens;
  check_spec("needle", spec.length, spec.key_tokens, spec.value_tokens, 2 * item + 1);
  if (static_cast<std::int64_t>(haystack.size()) < spec.length) {
    throw std::invalid_argument("needle: the haystack has " + std::to_string(haystack.size()) + " tokens, fewer than length " +
                                std::to_string(spec.length));
  }
  core::Rng rng(task_stream(task_seed, "needle", spec.length, index));
  const auto key = draw(rng, vocab.keys, spec.key_tokens);
  const auto value = draw(rng, vocab.values, spec.value_tokens);
  // The needle starts at a depth in [0, 0.5) of the room left before the query.
  const std::int64_t room = spec.length - 2 * item;
  const auto depth = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(room / 2 + 1)));
  RetrievalExample ex;
  ex.task = "needle";
  ex.length = spec.length;
  ex.tokens.assign(haystack.begin(), haystack.begin() + spec.length);
  std::copy(key.begin(), key.end(), ex.tokens.begin() + depth);
  std::copy(value.begin(), value.end(), ex.tokens.begin() + depth + spec.key_tokens);
  const std::int64_t query = spec.length - item;
  std::copy(key.begin(), key.end(), ex.tokens.begin() + query);
  std::copy(value.begin(), value.end(), ex.tokens.begin() + query + spec.key_tokens);
  const std::int64_t answer = query + spec.key_tokens;
  ex.queries.push_back({answer, spec.value_tokens, answer - (depth + spec.key_tokens)});
  return ex;
}

RetrievalScore& RetrievalScore::operator+=(const RetrievalScore& other) {
  queries += other.queries;
  correct += other.correct;
  answer_tokens += other.answer_tokens;
  tokens_correct += other.tokens_correct;
  return *this;
}

RetrievalScore score_retrieval(const RetrievalExample& example, std::span<const std::int64_t> predictions) {
  if (static_cast<std::int64_t>(predictions.size()) != example.length ||
      static_cast<std::int64_t>(example.tokens.size()) != example.length) {
    throw std::invalid_argument("score_retrieval: " + std::to_string(predictions.size()) + " predictions for a " +
                                example.task + " example of length " + std::to_string(example.length));
  }
  RetrievalScore score;
  for (const auto& q : example.queries) {
    if (q.answer_start < 1 || q.answer_start + q.answer_length > example.length) {
      throw std::invalid_argument("score_retrieval: a query's answer lies outside the example");
    }
    bool all = true;
    for (std::int64_t j = 0; j < q.answer_length; ++j) {
      const bool hit = predictions[q.answer_start + j - 1] == example.tokens[q.answer_start + j];
      score.tokens_correct += hit ? 1 : 0;
      all = all && hit;
    }
    score.answer_tokens += q.answer_length;
    score.queries += 1;
    score.correct += all ? 1 : 0;
  }
  return score;
}

}  // namespace k3lab::experiments::hybrid_attention
