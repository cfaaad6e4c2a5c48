#pragma once
// The order of training examples: fixed by the protocol's order seed and the data alone, so every
// arm and every seed of an experiment sees the same windows in the same order.
//
// The training stream is cut into non-overlapping windows of sequence_length + 1 tokens (inputs and
// shifted targets) starting at multiples of sequence_length. Epoch e visits every window once in
// the Fisher-Yates order drawn by core::Rng(stream_seed(order_seed, {e})). Example i of the run is
// window permutation_e[i mod W] with e = i div W; step s uses examples s*rows .. s*rows + rows - 1.
// The order is a pure function of the step, which is what makes a resumed run see the same data.
#include <cstdint>
#include <vector>

#include "k3lab/train/token_stream.hpp"

namespace k3lab::train {

class WindowOrder {
 public:
  WindowOrder(std::int64_t stream_tokens, std::int64_t sequence_length, std::uint64_t order_seed);

  std::int64_t windows() const { return windows_; }
  std::int64_t sequence_length() const { return sequence_length_; }
  // First token of the window that example `index` (0-based over the whole run) reads.
  std::int64_t window_start(std::int64_t index) const;

 private:
  const std::vector<std::int64_t>& permutation(std::int64_t epoch) const;
  std::int64_t sequence_length_;
  std::int64_t windows_;
  std::uint64_t order_seed_;
  mutable std::int64_t cached_epoch_ = -1;
  mutable std::vector<std::int64_t> cached_;
};

// Row-major (rows, sequence_length) token ids; targets are the inputs shifted by one.
struct TokenBatch {
  std::int64_t rows = 0;
  std::int64_t sequence_length = 0;
  std::vector<std::int64_t> inputs;
  std::vector<std::int64_t> targets;
};

// Rows `first_example` .. first_example + rows - 1 of the run's order. Throws std::runtime_error
// when a token is not below vocab_size (wrong tokenizer or vocab for these shards).
TokenBatch training_batch(const TokenStream& stream, const WindowOrder& order, std::int64_t first_example,
                          std::int64_t rows, std::int64_t vocab_size);

// Consecutive windows of the validation stream from its start: rows [first_row, first_row + rows).
TokenBatch validation_batch(const TokenStream& stream, std::int64_t sequence_length, std::int64_t first_row,
                            std::int64_t rows, std::int64_t vocab_size);

}  // namespace k3lab::train
