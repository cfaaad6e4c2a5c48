#pragma once
// Multiple-choice scoring of a causal language model, as lm-evaluation-harness scores its
// `multiple_choice` tasks (docs/downstream.md):
//
//   ll(item, k)  = sum_{j < n_k} log p(e_k[j] | context, e_k[0..j))     one forward of context + e_k
//   acc          : argmax_k ll(item, k)             == label
//   acc_norm     : argmax_k ll(item, k) / n_k       == label
//
// n_k is the number of ending tokens. The harness's acc_norm divides by the ending's length in
// characters; llm.c's HellaSwag evaluation divides by its token count, because its file holds tokens
// only (no text), and so does this scorer. With byte tokens (the built-in suite) the two agree
// wherever the text is ASCII.
// Ties go to the lowest candidate index (numpy's argmax, as both references use).
//
// Rows: every (item, candidate) pair is one row: input = (context + ending)[:-1], target =
// (context + ending)[1:]; rows are right-padded to the longest row of their batch, and only the
// n_k target positions of the ending are summed, so padding cannot enter a score. A row longer than
// max_length loses context tokens from the left (counted in the result); an ending that does not fit
// beside one context token is an error.
//
// Determinism: the per-token log-likelihoods are summed on the host in double, in token order, so
// the scorer adds nothing that depends on the batch; the model's own forward may round differently
// between batch shapes (GEMM kernel choice), which is why a protocol should freeze batch_rows too.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/train/multiple_choice_item.hpp"

namespace k3lab::train {

// tokens: (B, T) int64 on options.device -> logits (B, T, V), any floating dtype. Any decoder fits,
// e.g. [&](const torch::Tensor& t) { return model->forward(t); } for a models::DecoderLM.
using LogitsFunction = std::function<torch::Tensor(const torch::Tensor& tokens)>;

struct MultipleChoiceOptions {
  std::int64_t vocab_size = 0;   // V of the logits; every token must be below it
  std::int64_t max_length = 0;   // longest input row the model takes (its context window)
  std::int64_t batch_rows = 16;  // candidate rows per forward
  torch::Device device = torch::kCPU;
  // Batches scored side by side on the CPU, one per thread (train/micro_batch_lanes.hpp), up to this
  // many; 1: one batch at a time. More than 1 only for a model function that may run on several
  // threads at once. The scores do not depend on it.
  int threads = 1;
};

struct CandidateScore {
  double log_likelihood = 0;  // sum over the ending's tokens
  std::int64_t tokens = 0;    // n_k
  double normalized() const { return log_likelihood / static_cast<double>(tokens); }
};

struct ItemScore {
  std::vector<CandidateScore> candidates;
  std::int64_t label = 0;
  std::int64_t chosen = 0;       // by the raw sum (acc)
  std::int64_t chosen_norm = 0;  // by the per-token mean (acc_norm)
  bool truncated = false;        // some candidate's context lost tokens on the left
};

struct MultipleChoiceResult {
  std::vector<ItemScore> items;
  std::int64_t count = 0;
  std::int64_t correct = 0;
  std::int64_t correct_norm = 0;
  double accuracy = 0;       // correct / count
  double accuracy_norm = 0;  // correct_norm / count
  double chance = 0;         // mean over items of 1 / (number of candidates)
  std::int64_t truncated_items = 0;
  std::int64_t batch_rows = 0;
  // The aggregate figures (no per-item detail): count, acc, acc_norm, chance, truncation, batch rows.
  nlohmann::json to_json() const;
};

// Throws std::invalid_argument naming the item and the fix for a malformed item or option, and
// std::runtime_error when the logits have the wrong shape. Runs under torch::NoGradGuard; the caller
// puts the model in evaluation mode and on options.device.
MultipleChoiceResult score_multiple_choice(const LogitsFunction& model, std::span<const MultipleChoiceItem> items,
                                           const MultipleChoiceOptions& options);

}  // namespace k3lab::train
