#include "k3lab/train/data_order.hpp"

#include <numeric>
#include <stdexcept>
#include <string>

#include "k3lab/core/rng.hpp"

namespace k3lab::train {
namespace {

void check_vocab(const std::vector<std::int64_t>& tokens, std::int64_t vocab_size, std::int64_t where) {
  for (auto t : tokens) {
    if (t < 0 || t >= vocab_size) {
      throw std::runtime_error("data: token " + std::to_string(t) + " near stream offset " + std::to_string(where) +
                               " is not below model.vocab_size " + std::to_string(vocab_size) +
                               "; the shards were made with another tokenizer, or vocab_size is too small");
    }
  }
}

}  // namespace

WindowOrder::WindowOrder(std::int64_t stream_tokens, std::int64_t sequence_length, std::uint64_t order_seed)
    : sequence_length_(sequence_length), windows_(0), order_seed_(order_seed) {
  if (sequence_length <= 0) throw std::invalid_argument("data order: sequence_length must be positive");
  windows_ = stream_tokens > 0 ? (stream_tokens - 1) / sequence_length : 0;
  if (windows_ <= 0) {
    throw std::invalid_argument("data order: the training stream has " + std::to_string(stream_tokens) +
                                " tokens, fewer than one window of sequence_length + 1 = " +
                                std::to_string(sequence_length + 1) + "; use a larger corpus or a shorter window");
  }
}

const std::vector<std::int64_t>& WindowOrder::permutation(std::int64_t epoch) const {
  if (epoch != cached_epoch_) {
    cached_.resize(static_cast<std::size_t>(windows_));
    std::iota(cached_.begin(), cached_.end(), std::int64_t{0});
    core::Rng rng(core::stream_seed(order_seed_, {static_cast<std::uint64_t>(epoch)}));
    for (std::int64_t i = windows_ - 1; i > 0; --i) {
      const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(i + 1)));
      std::swap(cached_[static_cast<std::size_t>(i)], cached_[static_cast<std::size_t>(j)]);
    }
    cached_epoch_ = epoch;
  }
  return cached_;
}

std::int64_t WindowOrder::window_start(std::int64_t index) const {
  if (index < 0) throw std::invalid_argument("data order: negative example index");
  const auto& perm = permutation(index / windows_);
  return perm[static_cast<std::size_t>(index % windows_)] * sequence_length_;
}

TokenBatch training_batch(const TokenStream& stream, const WindowOrder& order, std::int64_t first_example,
                          std::int64_t rows, std::int64_t vocab_size) {
  const std::int64_t T = order.sequence_length();
  TokenBatch batch{rows, T, std::vector<std::int64_t>(static_cast<std::size_t>(rows * T)),
                   std::vector<std::int64_t>(static_cast<std::size_t>(rows * T))};
  std::vector<std::int64_t> window(static_cast<std::size_t>(T + 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t start = order.window_start(first_example + r);
    stream.copy(start, T + 1, window.data());
    check_vocab(window, vocab_size, start);
    std::copy(window.begin(), window.end() - 1, batch.inputs.begin() + r * T);
    std::copy(window.begin() + 1, window.end(), batch.targets.begin() + r * T);
  }
  return batch;
}

TokenBatch validation_batch(const TokenStream& stream, std::int64_t sequence_length, std::int64_t first_row,
                            std::int64_t rows, std::int64_t vocab_size) {
  const std::int64_t T = sequence_length;
  if ((first_row + rows) * T + 1 > stream.size()) {
    throw std::runtime_error("data: validation needs " + std::to_string((first_row + rows) * T + 1) +
                             " tokens but the validation stream has " + std::to_string(stream.size()) +
                             "; lower validation_tokens or add validation shards");
  }
  TokenBatch batch{rows, T, std::vector<std::int64_t>(static_cast<std::size_t>(rows * T)),
                   std::vector<std::int64_t>(static_cast<std::size_t>(rows * T))};
  std::vector<std::int64_t> window(static_cast<std::size_t>(T + 1));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t start = (first_row + r) * T;
    stream.copy(start, T + 1, window.data());
    check_vocab(window, vocab_size, start);
    std::copy(window.begin(), window.end() - 1, batch.inputs.begin() + r * T);
    std::copy(window.begin() + 1, window.end(), batch.targets.begin() + r * T);
  }
  return batch;
}

}  // namespace k3lab::train
