#pragma once
// Synthetic long-context retrieval examples and their exact-match scoring. Torch-free.
//
// An example is a token sequence with queries: a query's answer is a run of tokens whose earlier
// occurrence (after the same key) the model must copy. With greedy predictions pred[t] (the argmax
// of the logits at position t, predicting token t + 1), a query is correct when every answer token
// is predicted exactly: pred[a + j - 1] == tokens[a + j] for j in [0, answer_length).
//
// Two tasks, both at any length (including beyond the training window):
//   MQAR   (multi-query associative recall, Zoology): P key/value pairs at the start, random filler,
//          then every key queried once (in a shuffled order) in the last tokens of the sequence.
//   needle a single key/value pair inserted into held-out text at a depth in [0, 0.5) of the
//          sequence, its key repeated at the end, its value the answer.
// Examples depend only on (task seed, task, length, index): identical for every arm.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace k3lab::experiments::hybrid_attention {

// Disjoint token pools for keys, values and filler.
struct TaskVocabulary {
  std::vector<std::int64_t> keys;
  std::vector<std::int64_t> values;
  std::vector<std::int64_t> filler;
};

// "bytes": keys 'A'-'Z', values '0'-'9', filler 'a'-'z' and space. Any other tokenizer: three equal
// id ranges in the upper three quarters of its usable vocabulary (gpt2: the 50257 real tokens,
// not the padding rows of a padded embedding; others: vocab_size).
TaskVocabulary task_vocabulary(const std::string& tokenizer, std::int64_t vocab_size);

struct RetrievalQuery {
  std::int64_t answer_start = 0;   // position of the first answer token
  std::int64_t answer_length = 0;
  std::int64_t distance = 0;       // tokens from the definition's answer to this answer
};

struct RetrievalExample {
  std::string task;  // "mqar" | "needle"
  std::int64_t length = 0;
  std::vector<std::int64_t> tokens;
  std::vector<RetrievalQuery> queries;
};

struct MqarSpec {
  std::int64_t length = 0;
  std::int64_t pairs = 0;           // >= 1; keys are distinct within an example
  std::int64_t key_tokens = 3;
  std::int64_t value_tokens = 2;
};

// The pair count used at a length: one pair per 64 tokens, between 1 and 32.
std::int64_t mqar_pairs_for_length(std::int64_t length);

RetrievalExample make_mqar_example(const MqarSpec& spec, const TaskVocabulary& vocab, std::uint64_t task_seed,
                                   std::int64_t index);

struct NeedleSpec {
  std::int64_t length = 0;
  std::int64_t key_tokens = 3;
  std::int64_t value_tokens = 2;
};

// haystack: held-out text of at least spec.length tokens (the caller picks a deterministic slice).
RetrievalExample make_needle_example(const NeedleSpec& spec, const TaskVocabulary& vocab,
                                     std::span<const std::int64_t> haystack, std::uint64_t task_seed,
                                     std::int64_t index);

struct RetrievalScore {
  std::int64_t queries = 0;
  std::int64_t correct = 0;        // exact match of the whole answer
  std::int64_t answer_tokens = 0;
  std::int64_t tokens_correct = 0;
  double accuracy() const { return queries ? static_cast<double>(correct) / static_cast<double>(queries) : 0.0; }
  RetrievalScore& operator+=(const RetrievalScore& other);
};

// predictions: greedy next-token predictions for positions 0 .. length - 1 (the last one unused).
RetrievalScore score_retrieval(const RetrievalExample& example, std::span<const std::int64_t> predictions);

}  // namespace k3lab::experiments::hybrid_attention
