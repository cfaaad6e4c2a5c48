#include "k3lab/train/multiple_choice.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <torch/torch.h>

#include "k3lab/train/micro_batch_lanes.hpp"

namespace k3lab::train {
namespace {

// One (item, candidate) pair as a model row.
struct ScoringRow {
  std::int64_t item = 0;
  std::int64_t candidate = 0;
  std::int64_t dropped = 0;       // context tokens cut on the left
  std::int64_t length = 0;        // input tokens: context + ending - 1 - dropped
  std::int64_t ending_start = 0;  // input position whose logits predict the ending's first token
  std::int64_t ending_tokens = 0;
};

std::string item_where(std::size_t index) { return "multiple choice item " + std::to_string(index) + ": "; }

void check_options(const MultipleChoiceOptions& options) {
  if (options.vocab_size <= 0) {
    throw std::invalid_argument("multiple choice: vocab_size must be the logits' width (> 0)");
  }
  if (options.max_length < 2) {
    throw std::invalid_argument("multiple choice: max_length must be the model's context window (>= 2 tokens)");
  }
  if (options.batch_rows <= 0) throw std::invalid_argument("multiple choice: batch_rows must be positive");
  if (options.threads <= 0)
    throw std::invalid_argument("multiple choice: threads must be positive (1: one batch at a time)");
}

void check_tokens(const std::vector<std::int64_t>& tokens, std::int64_t vocab_size, std::size_t index,
                  const std::string& what) {
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    if (tokens[t] < 0 || tokens[t] >= vocab_size) {
      throw std::invalid_argument(item_where(index) + what + " token " + std::to_string(t) + " is " +
                                  std::to_string(tokens[t]) + ", outside the model's vocabulary [0, " +
                                  std::to_string(vocab_size) + "); the suite was tokenised for another model");
    }
  }
}

void check_item(const MultipleChoiceItem& item, std::size_t index, const MultipleChoiceOptions& options) {
  if (item.context.empty()) {
    throw std::invalid_argument(item_where(index) + "empty context; the first ending token needs a token to follow");
  }
  if (item.endings.size() < 2) {
    throw std::invalid_argument(item_where(index) + "needs at least 2 candidate endings, has " +
                                std::to_string(item.endings.size()));
  }
  if (item.label < 0 || item.label >= static_cast<std::int64_t>(item.endings.size())) {
    throw std::invalid_argument(item_where(index) + "label " + std::to_string(item.label) +
                                " is not a candidate index [0, " + std::to_string(item.endings.size()) + ")");
  }
  check_tokens(item.context, options.vocab_size, index, "context");
  for (std::size_t k = 0; k < item.endings.size(); ++k) {
    const auto& ending = item.endings[k];
    const std::string name = "ending " + std::to_string(k);
    if (ending.empty()) {
      throw std::invalid_argument(item_where(index) + name + " is empty; every candidate needs a token");
    }
    if (static_cast<std::int64_t>(ending.size()) > options.max_length) {
      throw std::invalid_argument(item_where(index) + name + " has " + std::to_string(ending.size()) +
                                  " tokens, more than max_length " + std::to_string(options.max_length) +
                                  " (the window must hold the ending after one context token); evaluate with a "
                                  "longer window");
    }
    check_tokens(ending, options.vocab_size, index, name);
  }
}

std::vector<ScoringRow> plan_rows(std::span<const MultipleChoiceItem> items, std::int64_t max_length) {
  std::vector<ScoringRow> rows;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto c = static_cast<std::int64_t>(items[i].context.size());
    for (std::size_t k = 0; k < items[i].endings.size(); ++k) {
      const auto e = static_cast<std::int64_t>(items[i].endings[k].size());
      ScoringRow row{static_cast<std::int64_t>(i), static_cast<std::int64_t>(k), 0, 0, 0, e};
      row.dropped = std::max<std::int64_t>(0, c + e - 1 - max_length);  // check_item keeps e <= max_length
      row.length = c + e - 1 - row.dropped;
      row.ending_start = c - 1 - row.dropped;
      rows.push_back(row);
    }
  }
  return rows;
}

// Token at position p of the row's full sequence (context + ending, before any cut).
std::int64_t full_token(const MultipleChoiceItem& item, std::int64_t candidate, std::int64_t p) {
  const auto c = static_cast<std::int64_t>(item.context.size());
  return p < c ? item.context[static_cast<std::size_t>(p)]
               : item.endings[static_cast<std::size_t>(candidate)][static_cast<std::size_t>(p - c)];
}

// The ending log-likelihood sums of one batch of rows, from one forward.
std::vector<double> score_batch(const LogitsFunction& model, std::span<const MultipleChoiceItem> items,
                                std::span<const ScoringRow> rows, const MultipleChoiceOptions& options) {
  const auto B = static_cast<std::int64_t>(rows.size());
  std::int64_t T = 0;
  for (const auto& row : rows) T = std::max(T, row.length);
  // Right padding with token 0 (a valid id); padded positions are never read back below.
  std::vector<std::int64_t> inputs(static_cast<std::size_t>(B * T), 0);   // (B, T)
  std::vector<std::int64_t> targets(static_cast<std::size_t>(B * T), 0);  // (B, T)
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& row = rows[static_cast<std::size_t>(b)];
    const auto& item = items[static_cast<std::size_t>(row.item)];
    for (std::int64_t t = 0; t < row.length; ++t) {
      inputs[static_cast<std::size_t>(b * T + t)] = full_token(item, row.candidate, row.dropped + t);
      targets[static_cast<std::size_t>(b * T + t)] = full_token(item, row.candidate, row.dropped + t + 1);
    }
  }
  const auto on_device = [&](std::vector<std::int64_t>& values) {
    // (B, T), always a copy: the model may keep its input beyond this batch.
    return torch::from_blob(values.data(), {B, T}, torch::kInt64).to(options.device, false, true);
  };
  const auto input_tensor = on_device(inputs);
  const auto target_tensor = on_device(targets);
  const auto logits = model(input_tensor);  // (B, T, V)
  if (logits.dim() != 3 || logits.size(0) != B || logits.size(1) != T || logits.size(2) != options.vocab_size) {
    throw std::runtime_error("multiple choice: the model returned logits of shape " + c10::str(logits.sizes()) +
                             " for tokens (" + std::to_string(B) + ", " + std::to_string(T) +
                             "); expected (B, T, vocab_size = " + std::to_string(options.vocab_size) + ")");
  }
  const auto log_probs = torch::log_softmax(logits.to(torch::kFloat32), -1);          // (B, T, V)
  const auto picked = log_probs.gather(-1, target_tensor.unsqueeze(-1)).squeeze(-1);  // (B, T)
  const auto host = picked.to(torch::kFloat64).cpu().contiguous();                    // (B, T)
  const double* values = host.data_ptr<double>();
  std::vector<double> sums(static_cast<std::size_t>(B), 0.0);
  for (std::int64_t b = 0; b < B; ++b) {
    const auto& row = rows[static_cast<std::size_t>(b)];
    double sum = 0.0;  // in token order, whatever the batch: the scorer's part of determinism
    for (std::int64_t j = 0; j < row.ending_tokens; ++j) sum += values[b * T + row.ending_start + j];
    sums[static_cast<std::size_t>(b)] = sum;
  }
  return sums;
}

void choose(ItemScore& item) {
  for (std::size_t k = 1; k < item.candidates.size(); ++k) {
    const auto& c = item.candidates[k];
    const auto index = static_cast<std::int64_t>(k);
    if (c.log_likelihood > item.candidates[static_cast<std::size_t>(item.chosen)].log_likelihood) item.chosen = index;
    if (c.normalized() > item.candidates[static_cast<std::size_t>(item.chosen_norm)].normalized()) {
      item.chosen_norm = index;
    }
  }
}

}  // namespace

nlohmann::json MultipleChoiceResult::to_json() const {
  return {{"items", count},
          {"correct", correct},
          {"correct_norm", correct_norm},
          {"acc", accuracy},
          {"acc_norm", accuracy_norm},
          {"chance", chance},
          {"truncated_items", truncated_items},
          {"batch_rows", batch_rows}};
}

MultipleChoiceResult score_multiple_choice(const LogitsFunction& model, std::span<const MultipleChoiceItem> items,
                                           const MultipleChoiceOptions& options) {
  check_options(options);
  if (items.empty()) throw std::invalid_argument("multiple choice: no items to score");
  for (std::size_t i = 0; i < items.size(); ++i) check_item(items[i], i, options);

  MultipleChoiceResult result;
  result.items.resize(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    result.items[i].candidates.resize(items[i].endings.size());
    result.items[i].label = items[i].label;
  }
  const auto rows = plan_rows(items, options.max_length);
  const auto per_batch = static_cast<std::size_t>(options.batch_rows);
  const auto batches = static_cast<std::int64_t>((rows.size() + per_batch - 1) / per_batch);
  const auto batch_rows = [&](std::int64_t b) {
    const auto begin = static_cast<std::size_t>(b) * per_batch;
    return std::span<const ScoringRow>(rows).subspan(begin, std::min(rows.size() - begin, per_batch));
  };
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(batches));
  torch::NoGradGuard no_grad;
  const int lanes = micro_batch_lanes(options.threads, batches, options.device);
  run_side_by_side(lanes, options.threads, batches, [&](std::int64_t b) {
    sums[static_cast<std::size_t>(b)] = score_batch(model, items, batch_rows(b), options);
  });
  for (std::int64_t b = 0; b < batches; ++b) {
    const auto batch = batch_rows(b);
    for (std::size_t r = 0; r < batch.size(); ++r) {
      auto& item = result.items[static_cast<std::size_t>(batch[r].item)];
      item.candidates[static_cast<std::size_t>(batch[r].candidate)] = {sums[static_cast<std::size_t>(b)][r],
                                                                       batch[r].ending_tokens};
      item.truncated = item.truncated || batch[r].dropped > 0;
    }
  }
  double chance_sum = 0.0;
  for (auto& item : result.items) {
    choose(item);
    result.correct += item.chosen == item.label ? 1 : 0;
    result.correct_norm += item.chosen_norm == item.label ? 1 : 0;
    result.truncated_items += item.truncated ? 1 : 0;
    chance_sum += 1.0 / static_cast<double>(item.candidates.size());
  }
  result.count = static_cast<std::int64_t>(items.size());
  const auto count = static_cast<double>(result.count);
  result.accuracy = static_cast<double>(result.correct) / count;
  result.accuracy_norm = static_cast<double>(result.correct_norm) / count;
  result.chance = chance_sum / count;
  result.batch_rows = options.batch_rows;
  return result;
}

}  // namespace k3lab::train
