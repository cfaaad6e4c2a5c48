// The built-in suite: deterministic, drawn from held-out bytes only (checked against the excerpt
// itself and the documented 90/10 split), distractors that differ from the answer, and a suite that
// separates a briefly trained tiny model from an untrained one by a margin computed from its size.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>

#include <torch/torch.h>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/builtin_corpus.hpp"
#include "k3lab/train/builtin_suite.hpp"
#include "tiny_training.hpp"

namespace k3lab::train {
namespace {

const BuiltinSuite& default_suite() {
  static const BuiltinSuite suite = make_builtin_suite();
  return suite;
}

std::string as_text(const std::vector<std::int64_t>& tokens) { return {tokens.begin(), tokens.end()}; }

TEST(BuiltinSuite, IsDeterministicAndHashesItsItems) {
  const auto& a = default_suite();
  const auto b = make_builtin_suite();
  ASSERT_EQ(a.items.size(), b.items.size());
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    EXPECT_EQ(a.items[i].context, b.items[i].context);
    EXPECT_EQ(a.items[i].endings, b.items[i].endings);
    EXPECT_EQ(a.items[i].label, b.items[i].label);
  }
  EXPECT_EQ(a.items_sha256, b.items_sha256);
  EXPECT_EQ(a.items_sha256, multiple_choice_items_sha256(a.items));
  // Step 5 by hand for one item: the compact JSON with sorted keys.
  const std::vector<MultipleChoiceItem> one = {{{104, 105}, {{33}, {63}}, 1}};
  EXPECT_EQ(multiple_choice_items_sha256(one),
            core::sha256_hex(R"([{"context":[104,105],"endings":[[33],[63]],"label":1}])"));
  BuiltinSuiteSpec other;
  other.seed += 1;
  EXPECT_NE(make_builtin_suite(other).items_sha256, a.items_sha256);
}

TEST(BuiltinSuite, PublishesItsDerivation) {
  const auto& suite = default_suite();
  const auto d = suite.derivation();
  EXPECT_EQ(d.at("suite"), "builtin-tiny-next-passage");
  EXPECT_EQ(d.at("seed"), BuiltinSuiteSpec{}.seed);
  EXPECT_EQ(d.at("context_bytes"), 24);
  EXPECT_EQ(d.at("ending_min_bytes"), 4);
  EXPECT_EQ(d.at("ending_max_bytes"), 8);
  EXPECT_EQ(d.at("passage_bytes"), 32);
  EXPECT_EQ(d.at("candidates"), 4);
  EXPECT_EQ(d.at("items").get<std::size_t>(), suite.items.size());
  EXPECT_EQ(d.at("items_sha256"), suite.items_sha256);
  EXPECT_EQ(d.at("corpus_sha256"), std::string(kBuiltinTinySha256));
  EXPECT_EQ(d.at("licence"), "public domain");
  EXPECT_DOUBLE_EQ(d.at("chance").get<double>(), 0.25);
  // What a protocol freezes: a change of the derivation, the generator or the corpus changes it (and
  // then every protocol that froze it must be re-frozen). `tail -c 4425` of the excerpt hashes to the second.
  EXPECT_EQ(d.at("items_sha256"), "cd07bead28ed689ae3632efc77cef655124ab325469f1cae1dad11e9f886bd11");
  EXPECT_EQ(d.at("validation_sha256"), "22bc71cd8051301d94ad18864e00c135c7b7dd74fbd1a4033785d70134536bac");
  // Every whole 32-byte passage of the held-out bytes is an item: 4,425 / 32.
  EXPECT_EQ(suite.items.size(), 138u);
  EXPECT_EQ(static_cast<std::int64_t>(suite.items.size()), suite.validation_bytes / 32);
}

TEST(BuiltinSuite, UsesOnlyHeldOutBytes) {
  const auto& suite = default_suite();
  const std::string_view text = builtin_tiny_text();
  // docs/data.md: the first 90% of the excerpt's bytes train, the rest validate.
  const auto split = static_cast<std::int64_t>(static_cast<double>(text.size()) * 0.9);
  EXPECT_EQ(suite.validation_offset, split);
  EXPECT_EQ(suite.validation_bytes, static_cast<std::int64_t>(text.size()) - split);
  EXPECT_EQ(suite.validation_sha256, core::sha256_hex(text.substr(static_cast<std::size_t>(split))));
  ASSERT_EQ(suite.passage_offsets.size(), suite.items.size());
  std::set<std::string> true_endings;
  for (std::size_t i = 0; i < suite.items.size(); ++i) {
    const auto& item = suite.items[i];
    const auto& truth = item.endings[static_cast<std::size_t>(item.label)];
    const auto start = static_cast<std::size_t>(split + suite.passage_offsets[i]);
    EXPECT_EQ(suite.passage_offsets[i], static_cast<std::int64_t>(i) * 32);
    ASSERT_LE(suite.passage_offsets[i] + 32, suite.validation_bytes);
    EXPECT_EQ(as_text(item.context), text.substr(start, 24)) << "item " << i;
    EXPECT_EQ(as_text(truth), text.substr(start + 24, truth.size())) << "item " << i;
    true_endings.insert(as_text(truth));
  }
  // A distractor is another held-out passage's true ending, never training text.
  for (const auto& item : suite.items) {
    for (const auto& ending : item.endings) EXPECT_TRUE(true_endings.count(as_text(ending))) << as_text(ending);
  }
}

TEST(BuiltinSuite, DistractorsDifferAndEndingsStopAtWords) {
  const auto& suite = default_suite();
  std::array<int, 4> labels{};
  for (std::size_t i = 0; i < suite.items.size(); ++i) {
    const auto& item = suite.items[i];
    ASSERT_EQ(item.endings.size(), 4u);
    ++labels[static_cast<std::size_t>(item.label)];
    const std::set<std::vector<std::int64_t>> distinct(item.endings.begin(), item.endings.end());
    EXPECT_EQ(distinct.size(), 4u) << "item " << i << ": a distractor repeats the answer or another distractor";
    for (const auto& ending : item.endings) {
      ASSERT_GE(ending.size(), 4u);
      ASSERT_LE(ending.size(), 8u);
      if (ending.size() < 8) {
        EXPECT_TRUE(ending.back() == ' ' || ending.back() == '\n') << as_text(ending);
      }
    }
  }
  // The answer's position is drawn, so a model that always picks one index scores near chance.
  for (int count : labels) EXPECT_GT(count, static_cast<int>(suite.items.size()) / 10);
}

TEST(BuiltinSuite, RefusesImpossibleSpecs) {
  BuiltinSuiteSpec spec;
  spec.ending_min_bytes = 0;
  EXPECT_THROW(make_builtin_suite(spec), std::invalid_argument);
  spec = {};
  spec.ending_max_bytes = 3;  // below ending_min_bytes (4)
  EXPECT_THROW(make_builtin_suite(spec), std::invalid_argument);
  spec = {};
  spec.context_bytes = 2000;
  try {
    make_builtin_suite(spec);
    FAIL() << "a suite of fewer than four passages must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("shorten context_bytes"), std::string::npos) << e.what();
  }
}

MultipleChoiceResult score(models::DecoderLM& model, std::int64_t max_length) {
  model->eval();
  MultipleChoiceOptions options;
  options.vocab_size = 256;
  options.max_length = max_length;
  options.batch_rows = 32;
  return score_multiple_choice([&](const torch::Tensor& t) { return model->forward(t); }, default_suite().items,
                               options);
}

// The trainer tests' tiny model (about 9K parameters) on the training bytes of builtin-tiny: 400
// steps of 512 tokens (about 5 passes over the 40 KB) reach a loss near 2.1 nats/byte, where a byte
// model starts to use a few bytes of context (a byte trigram model scores about 0.6 here; a
// bigram about 0.35). 9 s on one thread of a 2-core VM, up to 17 s while it also compiles.
TEST(BuiltinSuite, SeparatesATrainedModelFromAnUntrainedOne) {
  auto config = testing::tiny_config();
  config.sequence_length = 32;  // every item fits: 24 context + at most 8 ending bytes - 1
  config.batch_tokens = 512;
  config.token_budget = 512 * 400;
  config.eval_interval_tokens = config.token_budget;
  config.validation_tokens = config.sequence_length;
  config.micro_batch_rows = 16;
  config.optimizer.learning_rate = 2e-2;
  // The trained model's own initialisation (DecoderLmTask seeds LibTorch the same way).
  torch::manual_seed(config.init_seed);
  models::DecoderLM untrained(config.model, config.init_seed);
  const auto before = score(untrained, config.sequence_length);

  const auto start = std::chrono::steady_clock::now();
  auto trained = train(config, testing::corpus());
  ASSERT_EQ(trained.status, TrainResult::Status::Completed) << trained.detail;
  const double train_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto after = score(trained.model, config.sequence_length);

  const double n = static_cast<double>(after.count);
  const double sd = std::sqrt(after.chance * (1.0 - after.chance) / n);  // of a binomial accuracy at chance
  std::cout << "built-in suite: " << after.count << " items, chance " << after.chance << ", chance + 2 sd "
            << after.chance + 2 * sd << "; untrained acc " << before.accuracy << " acc_norm " << before.accuracy_norm
            << "; trained (" << config.token_budget << " tokens in " << train_seconds << " s, final loss "
            << trained.state.losses.back() << ") acc " << after.accuracy << " acc_norm " << after.accuracy_norm << "\n";
  EXPECT_EQ(before.count, after.count);
  EXPECT_DOUBLE_EQ(after.chance, 0.25);
  EXPECT_EQ(after.truncated_items, 0);
  EXPECT_GT(after.accuracy, after.chance + 2 * sd);
  EXPECT_GT(after.accuracy_norm, after.chance + 2 * sd);
  // Against the untrained model: more than 2 sd of the difference of two such accuracies.
  EXPECT_GT(after.accuracy - before.accuracy, 2 * std::sqrt(2.0) * sd);
  EXPECT_GT(after.accuracy_norm - before.accuracy_norm, 2 * std::sqrt(2.0) * sd);
}

}  // namespace
}  // namespace k3lab::train
