// Datasets (built-in corpus, shard directories, their errors) and the training order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/builtin_corpus.hpp"
#include "k3lab/train/byte_tokenizer.hpp"
#include "k3lab/train/data_order.hpp"
#include "k3lab/train/dataset.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(BuiltinCorpus, EmbeddedTextIsTheCommittedFixture) {
  const auto fixture = read_file(std::filesystem::path(K3LAB_SOURCE_DIR) / "fixtures/corpus/jargon-4.4.7-excerpt.txt");
  EXPECT_EQ(builtin_tiny_text(), fixture);
  EXPECT_EQ(core::sha256_hex(fixture), kBuiltinTinySha256);
  const auto manifest = read_file(std::filesystem::path(K3LAB_SOURCE_DIR) / "fixtures/corpus/MANIFEST.json");
  EXPECT_NE(manifest.find(std::string(kBuiltinTinySha256)), std::string::npos);
}

TEST(ByteTokenizer, RoundTripsUtf8) {
  const std::string text = "Verb Doubling \xe2\x80\x98hack\xe2\x80\x99\n";
  const auto tokens = encode_bytes(text);
  EXPECT_EQ(tokens.size(), text.size());
  EXPECT_EQ(tokens[0], static_cast<std::uint32_t>('V'));
  EXPECT_EQ(tokens[14], 0xE2u);
  EXPECT_EQ(decode_bytes(tokens), text);
  const std::vector<std::uint32_t> bad = {65, 300};
  EXPECT_THROW(decode_bytes(bad), std::invalid_argument);
}

TEST(Dataset, BuiltinTinySplitsNinetyTen) {
  const auto d = load_dataset({"builtin-tiny", "bytes", 256, "unused"});
  const auto total = static_cast<std::int64_t>(builtin_tiny_text().size());
  EXPECT_EQ(d.train.size() + d.validation.size(), total);
  EXPECT_EQ(d.train.size(), static_cast<std::int64_t>(static_cast<double>(total) * 0.9));
  EXPECT_EQ(d.validation.slice(0, 1)[0], static_cast<unsigned char>(builtin_tiny_text()[d.train.size()]));
  EXPECT_EQ(d.provenance.at("licence"), "public domain");
}

TEST(Dataset, BuiltinTinyRejectsOtherTokenizersAndSmallVocab) {
  EXPECT_THROW(load_dataset({"builtin-tiny", "gpt2", 50304, "unused"}), std::runtime_error);
  EXPECT_THROW(load_dataset({"builtin-tiny", "bytes", 128, "unused"}), std::runtime_error);
}

TEST(Dataset, LoadsAShardDirectoryInNameOrder) {
  TempDir root("dataset");
  write_token_shard(root.path / "toy/toy_train_000002.bin", std::vector<std::uint32_t>{3, 4});
  write_token_shard(root.path / "toy/toy_train_000001.bin", std::vector<std::uint32_t>{1, 2});
  write_token_shard(root.path / "toy/toy_val_000000.bin", std::vector<std::uint32_t>{9, 8, 7});
  const auto d = load_dataset({"toy", "gpt2", 50304, root.path});
  EXPECT_EQ(d.train.slice(0, 4), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(d.validation.slice(0, 3), (std::vector<std::int64_t>{9, 8, 7}));
  EXPECT_EQ(d.provenance.at("train_shards").size(), 2u);
  EXPECT_FALSE(d.provenance.at("tokenizer_checked_by_manifest").get<bool>());
}

TEST(Dataset, ManifestTokenizerMustMatch) {
  TempDir root("dataset");
  write_token_shard(root.path / "toy/toy_train_000001.bin", std::vector<std::uint32_t>{1, 2});
  write_token_shard(root.path / "toy/toy_val_000000.bin", std::vector<std::uint32_t>{1, 2});
  std::ofstream(root.path / "toy/manifest.json") << R"({"tokenizer": "bytes"})";
  try {
    load_dataset({"toy", "gpt2", 50304, root.path});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer \"bytes\""), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(load_dataset({"toy", "bytes", 256, root.path}));
}

TEST(Dataset, MissingDirectoryOrShardsSayWhatToDo) {
  TempDir root("dataset");
  try {
    load_dataset({"fineweb-edu-sample-10BT", "gpt2", 50304, root.path});
    FAIL();
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("K3LAB_DATA_DIR"), std::string::npos) << what;
    EXPECT_NE(what.find("build-corpus.sh"), std::string::npos) << what;
  }
  write_token_shard(root.path / "half/half_train_000001.bin", std::vector<std::uint32_t>{1, 2});
  EXPECT_THROW(load_dataset({"half", "gpt2", 50304, root.path}), std::runtime_error);
  EXPECT_THROW(load_dataset({"../etc", "gpt2", 50304, root.path}), std::invalid_argument);
}

TEST(Dataset, DataRootComesFromOptionsThenEnvironment) {
  EXPECT_EQ(data_root_from({{"data_dir", "/somewhere"}}), "/somewhere");
  ::setenv("K3LAB_DATA_DIR", "/from-env", 1);
  EXPECT_EQ(data_root_from(nlohmann::json::object()), "/from-env");
  ::unsetenv("K3LAB_DATA_DIR");
  EXPECT_EQ(data_root_from(nlohmann::json::object()), "data");
  EXPECT_THROW(data_root_from({{"data_dir", 3}}), std::invalid_argument);
}

TEST(DataOrder, EachEpochVisitsEveryWindowOnce) {
  const WindowOrder order(1001, 10, 3001);  // (1001 - 1) / 10 = 100 windows
  ASSERT_EQ(order.windows(), 100);
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    std::set<std::int64_t> starts;
    for (std::int64_t i = 0; i < 100; ++i) starts.insert(order.window_start(epoch * 100 + i));
    EXPECT_EQ(starts.size(), 100u);
    EXPECT_EQ(*starts.begin(), 0);
    EXPECT_EQ(*starts.rbegin(), 990);
  }
  std::vector<std::int64_t> first, second;
  for (std::int64_t i = 0; i < 100; ++i) {
    first.push_back(order.window_start(i));
    second.push_back(order.window_start(100 + i));
  }
  EXPECT_NE(first, second);  // a fresh shuffle per epoch
}

TEST(DataOrder, DependsOnlyOnSeedAndIsDeterministic) {
  const WindowOrder a(5000, 16, 7), b(5000, 16, 7), c(5000, 16, 8);
  std::vector<std::int64_t> sa, sb, sc;
  // Query b backwards to show the order does not depend on the access pattern (resume mid-run).
  for (std::int64_t i = 0; i < 700; ++i) sa.push_back(a.window_start(i));
  for (std::int64_t i = 699; i >= 0; --i) sb.insert(sb.begin(), b.window_start(i));
  for (std::int64_t i = 0; i < 700; ++i) sc.push_back(c.window_start(i));
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST(DataOrder, BatchesAreShiftedWindowsAndCheckTheVocabulary) {
  std::vector<std::uint32_t> tokens(41);
  for (std::uint32_t i = 0; i < tokens.size(); ++i) tokens[i] = i;
  const auto stream = TokenStream::from_tokens(tokens);
  const WindowOrder order(stream.size(), 8, 1);  // 5 windows
  const auto batch = training_batch(stream, order, 0, 2, 64);
  for (std::int64_t r = 0; r < 2; ++r) {
    const auto start = order.window_start(r);
    for (std::int64_t t = 0; t < 8; ++t) {
      EXPECT_EQ(batch.inputs[r * 8 + t], start + t);
      EXPECT_EQ(batch.targets[r * 8 + t], start + t + 1);
    }
  }
  EXPECT_THROW(training_batch(stream, order, 0, 5, 20), std::runtime_error);  // tokens up to 40 >= 20
  const auto val = validation_batch(stream, 8, 1, 2, 64);
  EXPECT_EQ(val.inputs.front(), 8);
  EXPECT_EQ(val.targets.back(), 24);
  EXPECT_THROW(validation_batch(stream, 8, 4, 2, 64), std::runtime_error);
  EXPECT_THROW(WindowOrder(8, 8, 1), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::train
