// Multiple-choice scoring against independent references: a model with fixed logits (a bigram table
// plus a position bias) whose candidate log-likelihoods a double loop recomputes from the same
// formulas, hand-computed values for a uniform model, batch-size invariance (bit for bit), batches side by side (bit
// for bit), padding that must not reach a score, left truncation, and one error per malformed input.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/train/multiple_choice.hpp"
#include "tiny_training.hpp"

namespace k3lab::train {
namespace {

constexpr std::int64_t kVocab = 7;
constexpr std::int64_t kPositions = 64;

// The fixed logits, as plain doubles: logit(previous token a, position t, next token v).
double bigram_logit(std::int64_t a, std::int64_t v) {
  return 2.0 * std::sin(1.3 * static_cast<double>(a) + 0.7 * static_cast<double>(v));
}
double position_logit(std::int64_t t, std::int64_t v) {
  return 0.25 * std::cos(0.9 * static_cast<double>(t * (v + 1)));
}

// The model under test: logits[b, t, v] = bigram(tokens[b, t], v) + position(t, v), by tensor ops.
LogitsFunction fixed_logit_model(int* calls = nullptr) {
  auto bigram = torch::empty({kVocab, kVocab}, torch::kFloat64);        // (a, v)
  auto position = torch::empty({kPositions, kVocab}, torch::kFloat64);  // (t, v)
  for (std::int64_t a = 0; a < kVocab; ++a) {
    for (std::int64_t v = 0; v < kVocab; ++v) bigram[a][v] = bigram_logit(a, v);
  }
  for (std::int64_t t = 0; t < kPositions; ++t) {
    for (std::int64_t v = 0; v < kVocab; ++v) position[t][v] = position_logit(t, v);
  }
  return [=](const torch::Tensor& tokens) {
    if (calls) ++*calls;
    const auto B = tokens.size(0), T = tokens.size(1);
    const auto rows = bigram.index_select(0, tokens.reshape({-1})).view({B, T, kVocab});  // (B, T, V)
    return (rows + position.slice(0, 0, T).unsqueeze(0)).to(torch::kFloat32);             // (B, T, V)
  };
}

// Reference: the window is the last max_length tokens of (context + ending)[:-1]; each ending token
// is scored by log-softmax at the position before it, in double.
double reference_log_likelihood(const MultipleChoiceItem& item, std::size_t k, std::int64_t max_length) {
  std::vector<std::int64_t> full = item.context;
  full.insert(full.end(), item.endings[k].begin(), item.endings[k].end());
  const auto inputs = static_cast<std::int64_t>(full.size()) - 1;
  const std::int64_t cut = std::max<std::int64_t>(0, inputs - max_length);
  double sum = 0.0;
  for (std::size_t j = 0; j < item.endings[k].size(); ++j) {
    const auto target_index = static_cast<std::int64_t>(item.context.size() + j);
    const auto previous = full[static_cast<std::size_t>(target_index - 1)];
    const auto position = target_index - 1 - cut;
    double normaliser = 0.0;
    for (std::int64_t v = 0; v < kVocab; ++v) {
      normaliser += std::exp(bigram_logit(previous, v) + position_logit(position, v));
    }
    const auto target = full[static_cast<std::size_t>(target_index)];
    sum += bigram_logit(previous, target) + position_logit(position, target) - std::log(normaliser);
  }
  return sum;
}

std::vector<MultipleChoiceItem> random_items(std::int64_t count, std::uint64_t seed) {
  core::Rng rng(seed);
  const auto tokens = [&](std::int64_t n) {
    std::vector<std::int64_t> t(static_cast<std::size_t>(n));
    for (auto& x : t) x = static_cast<std::int64_t>(rng.below(kVocab));
    return t;
  };
  std::vector<MultipleChoiceItem> items(static_cast<std::size_t>(count));
  for (auto& item : items) {
    item.context = tokens(1 + static_cast<std::int64_t>(rng.below(12)));
    const auto candidates = 2 + static_cast<std::int64_t>(rng.below(4));
    for (std::int64_t k = 0; k < candidates; ++k) {
      item.endings.push_back(tokens(1 + static_cast<std::int64_t>(rng.below(9))));
    }
    item.label = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(candidates)));
  }
  return items;
}

MultipleChoiceOptions options_with(std::int64_t batch_rows, std::int64_t max_length = kPositions) {
  MultipleChoiceOptions options;
  options.vocab_size = kVocab;
  options.max_length = max_length;
  options.batch_rows = batch_rows;
  return options;
}

std::int64_t argmax_first(const std::vector<double>& values) {
  return std::max_element(values.begin(), values.end()) - values.begin();  // first of equal maxima
}

void expect_matches_reference(const std::vector<MultipleChoiceItem>& items, const MultipleChoiceResult& result,
                              std::int64_t max_length) {
  ASSERT_EQ(result.items.size(), items.size());
  std::int64_t correct = 0, correct_norm = 0;
  double chance = 0.0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::vector<double> sums, means;
    for (std::size_t k = 0; k < items[i].endings.size(); ++k) {
      sums.push_back(reference_log_likelihood(items[i], k, max_length));
      means.push_back(sums.back() / static_cast<double>(items[i].endings[k].size()));
      const auto& got = result.items[i].candidates[k];
      EXPECT_NEAR(got.log_likelihood, sums.back(), 1e-4 * (1.0 + std::abs(sums.back())))
          << "item " << i << " candidate " << k;
      EXPECT_EQ(got.tokens, static_cast<std::int64_t>(items[i].endings[k].size()));
    }
    EXPECT_EQ(result.items[i].chosen, argmax_first(sums)) << "item " << i;
    EXPECT_EQ(result.items[i].chosen_norm, argmax_first(means)) << "item " << i;
    correct += argmax_first(sums) == items[i].label ? 1 : 0;
    correct_norm += argmax_first(means) == items[i].label ? 1 : 0;
    chance += 1.0 / static_cast<double>(items[i].endings.size());
  }
  EXPECT_EQ(result.count, static_cast<std::int64_t>(items.size()));
  EXPECT_EQ(result.correct, correct);
  EXPECT_EQ(result.correct_norm, correct_norm);
  EXPECT_DOUBLE_EQ(result.accuracy, static_cast<double>(correct) / static_cast<double>(items.size()));
  EXPECT_DOUBLE_EQ(result.accuracy_norm, static_cast<double>(correct_norm) / static_cast<double>(items.size()));
  EXPECT_NEAR(result.chance, chance / static_cast<double>(items.size()), 1e-12);
}

TEST(MultipleChoice, MatchesTheDoubleLoopReference) {
  const auto items = random_items(40, 5);
  const auto result = score_multiple_choice(fixed_logit_model(), items, options_with(8));
  expect_matches_reference(items, result, kPositions);
  EXPECT_EQ(result.truncated_items, 0);
  // The suite must not be degenerate: both metrics disagree somewhere and neither is all right or all wrong.
  std::int64_t disagreements = 0;
  for (const auto& item : result.items) disagreements += item.chosen != item.chosen_norm ? 1 : 0;
  EXPECT_GT(disagreements, 0);
  EXPECT_GT(result.correct, 0);
  EXPECT_LT(result.correct, result.count);
}

TEST(MultipleChoice, UniformModelByHand) {
  // Zero logits: every token has log-likelihood -ln 7, so a candidate of n tokens scores -n ln 7.
  // Raw sums prefer the shortest ending (index 1); per-token means tie and go to the lowest index.
  const LogitsFunction uniform = [](const torch::Tensor& tokens) {
    return torch::zeros({tokens.size(0), tokens.size(1), kVocab});
  };
  MultipleChoiceItem a{{3, 4}, {{1, 2, 3}, {6}, {5, 5}}, 1};
  MultipleChoiceItem b{{0}, {{2, 2}, {1}}, 0};
  const std::vector<MultipleChoiceItem> items = {a, b};
  const auto result = score_multiple_choice(uniform, items, options_with(2));
  const double ln7 = std::log(7.0);
  EXPECT_NEAR(result.items[0].candidates[0].log_likelihood, -3 * ln7, 1e-5);
  EXPECT_NEAR(result.items[0].candidates[1].log_likelihood, -1 * ln7, 1e-5);
  EXPECT_NEAR(result.items[0].candidates[2].log_likelihood, -2 * ln7, 1e-5);
  EXPECT_EQ(result.items[0].chosen, 1);
  EXPECT_EQ(result.items[0].chosen_norm, 0);
  EXPECT_EQ(result.items[1].chosen, 1);
  EXPECT_EQ(result.items[1].chosen_norm, 0);
  EXPECT_EQ(result.correct, 1);       // item a by acc
  EXPECT_EQ(result.correct_norm, 1);  // item b by acc_norm
  EXPECT_DOUBLE_EQ(result.accuracy, 0.5);
  EXPECT_DOUBLE_EQ(result.chance, (1.0 / 3.0 + 1.0 / 2.0) / 2.0);
  const auto json = result.to_json();
  EXPECT_EQ(json.at("items"), 2);
  EXPECT_DOUBLE_EQ(json.at("acc_norm").get<double>(), 0.5);
  EXPECT_EQ(json.at("batch_rows"), 2);
}

TEST(MultipleChoice, SameScoresForAnyBatchSize) {
  const auto items = random_items(25, 17);
  int calls_one = 0;
  const auto one = score_multiple_choice(fixed_logit_model(&calls_one), items, options_with(1));
  std::int64_t rows = 0;
  for (const auto& item : items) rows += static_cast<std::int64_t>(item.endings.size());
  EXPECT_EQ(calls_one, rows);
  for (std::int64_t batch : {2, 3, 7, 16, 1000}) {
    int calls = 0;
    const auto other = score_multiple_choice(fixed_logit_model(&calls), items, options_with(batch));
    EXPECT_EQ(calls, (rows + batch - 1) / batch) << "several candidates per forward";
    for (std::size_t i = 0; i < items.size(); ++i) {
      for (std::size_t k = 0; k < items[i].endings.size(); ++k) {
        EXPECT_EQ(other.items[i].candidates[k].log_likelihood, one.items[i].candidates[k].log_likelihood)
            << "batch " << batch << " item " << i << " candidate " << k;
      }
    }
    EXPECT_EQ(other.correct, one.correct);
    EXPECT_EQ(other.correct_norm, one.correct_norm);
  }
}

TEST(MultipleChoice, PaddingNeverReachesAScore) {
  // After token 0 the model all but rules out token 0, and padding is token 0 (input and target):
  // a summed padded position would cost about -1000, so the short item's scores would jump when it
  // shares a batch with a long one.
  const LogitsFunction peaked = [](const torch::Tensor& tokens) {
    const auto previous_is_zero = tokens.eq(0).unsqueeze(-1).to(torch::kFloat32);  // (B, T, 1)
    auto logits = torch::zeros({tokens.size(0), tokens.size(1), kVocab});          // (B, T, V)
    logits.select(2, 1).add_(1000.0 * previous_is_zero.squeeze(-1));
    return logits;
  };
  const MultipleChoiceItem shorter{{1}, {{2}, {3}}, 0};
  const MultipleChoiceItem longer{{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, {{1, 2, 3, 4, 5, 6}, {6}}, 0};
  const std::vector<MultipleChoiceItem> alone = {shorter};
  const std::vector<MultipleChoiceItem> together = {shorter, longer};
  const auto a = score_multiple_choice(peaked, alone, options_with(4));
  const auto b = score_multiple_choice(peaked, together, options_with(4));
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(a.items[0].candidates[k].log_likelihood, b.items[0].candidates[k].log_likelihood);
    EXPECT_NEAR(a.items[0].candidates[k].log_likelihood, -std::log(7.0), 1e-5);
  }
  // And through the reference model, whose padded positions also carry logits.
  const auto items = random_items(12, 23);
  expect_matches_reference(items, score_multiple_choice(fixed_logit_model(), items, options_with(64)), kPositions);
}

TEST(MultipleChoice, TruncatesLongContextsFromTheLeft) {
  auto items = random_items(20, 31);
  const std::int64_t max_length = 10;  // endings have at most 9 tokens, contexts up to 12
  std::int64_t expected_truncated = 0;
  for (const auto& item : items) {
    bool cut = false;
    for (const auto& ending : item.endings) {
      cut = cut || static_cast<std::int64_t>(item.context.size() + ending.size()) - 1 > max_length;
    }
    expected_truncated += cut ? 1 : 0;
  }
  ASSERT_GT(expected_truncated, 0);
  const auto result = score_multiple_choice(fixed_logit_model(), items, options_with(5, max_length));
  expect_matches_reference(items, result, max_length);
  EXPECT_EQ(result.truncated_items, expected_truncated);
  EXPECT_EQ(result.to_json().at("truncated_items"), expected_truncated);
}

TEST(MultipleChoice, DecoderLmScoresDoNotDependOnTheBatch) {
  auto config = testing::tiny_model();
  config.vocab_size = kVocab;
  models::DecoderLM model(config, 7);
  model->eval();
  const LogitsFunction logits = [&](const torch::Tensor& tokens) { return model->forward(tokens); };
  const auto items = random_items(20, 41);
  const auto one = score_multiple_choice(logits, items, options_with(1));
  for (std::int64_t batch : {3, 16, 200}) {
    const auto other = score_multiple_choice(logits, items, options_with(batch));
    for (std::size_t i = 0; i < items.size(); ++i) {
      for (std::size_t k = 0; k < items[i].endings.size(); ++k) {
        EXPECT_NEAR(other.items[i].candidates[k].log_likelihood, one.items[i].candidates[k].log_likelihood, 1e-5)
            << "batch " << batch << " item " << i << " candidate " << k;
      }
      EXPECT_EQ(other.items[i].chosen, one.items[i].chosen);
      EXPECT_EQ(other.items[i].chosen_norm, one.items[i].chosen_norm);
    }
  }
}

// Batches side by side (options.threads): every batch on a lane thread with one intra-op thread, the
// scores bit for bit those of one batch at a time on one thread.
TEST(MultipleChoice, BatchesSideBySideScoreBitForBitAsOneAtATime) {
  auto config = testing::tiny_model();
  config.vocab_size = kVocab;
  models::DecoderLM model(config, 7);
  model->eval();
  std::mutex mutex;
  std::set<std::thread::id> callers;
  std::set<int> intra_op_threads;
  const LogitsFunction logits = [&](const torch::Tensor& tokens) {
    {
      const std::lock_guard lock(mutex);
      callers.insert(std::this_thread::get_id());
      intra_op_threads.insert(at::get_num_threads());
    }
    return model->forward(tokens);
  };
  const auto items = random_items(20, 41);
  const int threads_before = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = score_multiple_choice(logits, items, options_with(4));
  EXPECT_EQ(callers.size(), 1u);
  callers.clear();
  intra_op_threads.clear();
  at::set_num_threads(2);
  auto options = options_with(4);
  options.threads = 2;
  const auto side_by_side = score_multiple_choice(logits, items, options);
  EXPECT_EQ(callers.size(), 2u) << "two lanes score the batches";
  EXPECT_EQ(intra_op_threads, std::set<int>{1});
  EXPECT_EQ(at::get_num_threads(), 2);
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (std::size_t k = 0; k < items[i].endings.size(); ++k) {
      EXPECT_EQ(side_by_side.items[i].candidates[k].log_likelihood, one.items[i].candidates[k].log_likelihood)
          << "item " << i << " candidate " << k;
    }
  }
  options.threads = 0;
  EXPECT_THROW(score_multiple_choice(logits, items, options), std::invalid_argument);
  at::set_num_threads(threads_before);
}

void expect_invalid(const std::vector<MultipleChoiceItem>& items, const MultipleChoiceOptions& options,
                    const std::string& fragment) {
  try {
    score_multiple_choice(fixed_logit_model(), items, options);
    FAIL() << "expected an error containing \"" << fragment << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(MultipleChoice, RefusesMalformedItemsAndOptions) {
  const MultipleChoiceItem good{{1, 2}, {{3}, {4}}, 1};
  expect_invalid({}, options_with(2), "no items");
  expect_invalid({good, {{}, {{3}, {4}}, 0}}, options_with(2), "item 1: empty context");
  expect_invalid({{{1}, {{3}}, 0}}, options_with(2), "at least 2 candidate endings");
  expect_invalid({{{1}, {{3}, {4}}, 2}}, options_with(2), "label 2 is not a candidate index [0, 2)");
  expect_invalid({{{1}, {{3}, {}}, 0}}, options_with(2), "ending 1 is empty");
  expect_invalid({{{1, 7}, {{3}, {4}}, 0}}, options_with(2),
                 "context token 1 is 7, outside the model's vocabulary [0, 7)");
  expect_invalid({{{1}, {{3}, {-1}}, 0}}, options_with(2), "ending 1 token 0 is -1");
  expect_invalid({{{1}, {{3, 3, 3}, {4}}, 0}}, options_with(2, 2), "ending 0 has 3 tokens, more than max_length 2");
  expect_invalid({good}, options_with(0), "batch_rows must be positive");
  auto no_vocab = options_with(2);
  no_vocab.vocab_size = 0;
  expect_invalid({good}, no_vocab, "vocab_size");
  const LogitsFunction narrow = [](const torch::Tensor& tokens) {
    return torch::zeros({tokens.size(0), tokens.size(1), 3});
  };
  const std::vector<MultipleChoiceItem> items = {good};
  EXPECT_THROW(score_multiple_choice(narrow, items, options_with(2)), std::runtime_error);
}

}  // namespace
}  // namespace k3lab::train
