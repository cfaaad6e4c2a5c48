// llm.c's evaluation file (hellaswag_val.bin): files written here word by word, independently of
// the reader, following data_common.py's write_evalfile; a valid one, then one file per malformed
// field, each error checked for the file, the example, the byte offset and the problem.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>
#include <optional>

#include "k3lab/core/sha256.hpp"
#include "k3lab/train/hellaswag_file.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;
using Words = std::vector<std::uint16_t>;

struct RawExample {
  std::uint16_t delimiter = 65535;
  std::optional<std::uint16_t> bytes;  // default: the true byte count
  std::optional<std::uint16_t> index;  // default: the example's position
  std::uint16_t label = 0;
  std::optional<std::uint16_t> completions;  // default: endings.size()
  Words context;
  std::vector<Words> endings;
};

struct RawFile {
  std::int32_t magic = 20240522;
  std::int32_t version = 1;
  std::optional<std::int32_t> count;    // default: examples.size()
  std::optional<std::int32_t> longest;  // default: the longest example's bytes
  std::vector<RawExample> examples;
  std::string trailing;
  std::optional<std::size_t> cut_to;  // truncate the encoded file to this many bytes
};

Words example_words(const RawExample& e, std::size_t position) {
  Words w = {e.delimiter,
             0,
             e.index.value_or(static_cast<std::uint16_t>(position)),
             e.label,
             e.completions.value_or(static_cast<std::uint16_t>(e.endings.size())),
             static_cast<std::uint16_t>(e.context.size())};
  w.insert(w.end(), e.context.begin(), e.context.end());
  for (const auto& ending : e.endings) {
    w.push_back(static_cast<std::uint16_t>(ending.size()));
    w.insert(w.end(), ending.begin(), ending.end());
  }
  w[1] = e.bytes.value_or(static_cast<std::uint16_t>(2 * w.size()));
  return w;
}

std::string encode(const RawFile& f) {
  std::string body;
  std::int32_t longest = 0;
  for (std::size_t i = 0; i < f.examples.size(); ++i) {
    const auto w = example_words(f.examples[i], i);
    longest = std::max(longest, static_cast<std::int32_t>(2 * w.size()));
    body.append(reinterpret_cast<const char*>(w.data()), 2 * w.size());
  }
  std::array<std::int32_t, 256> header{};
  header[0] = f.magic;
  header[1] = f.version;
  header[2] = f.count.value_or(static_cast<std::int32_t>(f.examples.size()));
  header[3] = f.longest.value_or(longest);
  std::string bytes(reinterpret_cast<const char*>(header.data()), 1024);
  bytes += body + f.trailing;
  if (f.cut_to) bytes.resize(*f.cut_to);
  return bytes;
}

// Three examples of 40, 32 and 42 bytes: at bytes 1024, 1064 and 1096; the file has 1138 bytes.
RawFile valid_file() {
  RawFile f;
  f.examples.push_back({65535, {}, {}, 3, {}, {464, 3290, 318}, {{257}, {262, 11}, {50256}, {1000, 2000, 3000}}});
  f.examples.push_back({65535, {}, {}, 0, {}, {40}, {{1}, {2}, {3}, {4, 5}}});
  f.examples.push_back({65535, {}, {}, 2, {}, {10, 11, 12, 13}, {{7, 7}, {8}, {9, 9, 9}, {6}}});
  return f;
}

std::filesystem::path write(const TempDir& dir, const RawFile& f, const std::string& name = "hellaswag_val.bin") {
  const auto path = dir.path / name;
  const auto bytes = encode(f);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void expect_error(const std::filesystem::path& path, const std::vector<std::string>& fragments,
                  std::int64_t vocab_size = kGpt2VocabSize) {
  try {
    read_eval_file(path, vocab_size);
    FAIL() << "expected an error containing \"" << fragments.front() << "\"";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("eval file " + path.string() + ": "), std::string::npos) << what;
    for (const auto& fragment : fragments) EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(EvalFile, ReadsAValidFile) {
  TempDir dir("evalfile");
  const auto path = write(dir, valid_file());
  ASSERT_EQ(std::filesystem::file_size(path), 1138u);
  const auto file = read_eval_file(path);
  // The same three examples written by llm.c's own dev/data/data_common.py write_evalfile (at
  // karpathy/llm.c master, numpy 1.24) hash to this: the file above is byte for byte llm.c's.
  EXPECT_EQ(file.sha256, "929ad7665e6fa0e4fdbe7547f2f3a43f22cf3c9ed137e37cc25b4f7e22108d45");
  EXPECT_EQ(file.bytes, 1138);
  EXPECT_EQ(file.longest_example_bytes, 42);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file.sha256, core::sha256_hex(bytes));
  ASSERT_EQ(file.items.size(), 3u);
  EXPECT_EQ(file.items[0].context, (std::vector<std::int64_t>{464, 3290, 318}));
  EXPECT_EQ(file.items[0].endings,
            (std::vector<std::vector<std::int64_t>>{{257}, {262, 11}, {50256}, {1000, 2000, 3000}}));
  EXPECT_EQ(file.items[0].label, 3);
  EXPECT_EQ(file.items[1].context, (std::vector<std::int64_t>{40}));
  EXPECT_EQ(file.items[1].endings.back(), (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(file.items[2].label, 2);
  EXPECT_EQ(file.items[2].endings[2], (std::vector<std::int64_t>{9, 9, 9}));
  // One changed token changes the hash a protocol freezes.
  auto other = valid_file();
  other.examples[2].endings[3] = {5};
  EXPECT_NE(read_eval_file(write(dir, other, "other.bin")).sha256, file.sha256);
}

TEST(EvalFile, RefusesAMissingFileOrABadHeader) {
  TempDir dir("evalfile");
  expect_error(dir.path / "absent.bin", {"not found", "docs/downstream.md"});
  auto f = valid_file();
  f.cut_to = 100;
  expect_error(write(dir, f), {"only 100 bytes, shorter than the 1024-byte header", "hellaswag.py"});
  f = valid_file();
  f.magic = 12345;
  expect_error(write(dir, f), {"unknown magic 12345", "20240522"});
  f.magic = 20240520;
  expect_error(write(dir, f), {"magic 20240520 marks an llm.c token shard"});
  f = valid_file();
  f.version = 2;
  expect_error(write(dir, f), {"version 2; this reader knows version 1"});
  f = valid_file();
  f.count = 0;
  expect_error(write(dir, f), {"header declares 0 examples"});
}

TEST(EvalFile, RefusesAMissingDelimiterOrAWrongIndex) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.examples[1].delimiter = 65534;
  expect_error(write(dir, f), {"example 1 at byte 1064: expected the start delimiter 65535, found 65534"});
  f = valid_file();
  f.examples[1].index = 5;
  expect_error(write(dir, f), {"example 1 at byte 1064: its index field says 5"});
}

TEST(EvalFile, RefusesAByteCountThatDisagrees) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.examples[1].bytes = 33;
  expect_error(write(dir, f), {"example 1 at byte 1064: declares 33 bytes, not an even count"});
  f.examples[1].bytes = 34;
  expect_error(write(dir, f), {"example 1 at byte 1064: declares 34 bytes but its fields take 32"});
  f.examples[1].bytes = 30;
  expect_error(write(dir, f), {"example 1 at byte 1064: its fields need more than the declared 30 bytes (the 2 "
                               "tokens of completion 3 would end at byte 1096)"});
}

TEST(EvalFile, RefusesATruncatedExample) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.cut_to = 1130;
  expect_error(write(dir, f), {"example 2 at byte 1096: declares 42 bytes but only 34 remain; the file is truncated"});
  f.cut_to = 1100;
  expect_error(write(dir, f), {"example 2 at byte 1096: truncated: 4 bytes left"});
}

TEST(EvalFile, RefusesBadLabelsCompletionsAndEmptyParts) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.examples[1].label = 4;
  expect_error(write(dir, f), {"example 1 at byte 1064: label 4 is not a completion index 0..3"});
  f = valid_file();
  f.examples[1].endings.pop_back();
  expect_error(write(dir, f), {"example 1 at byte 1064: has 3 completions", "exactly 4"});
  f = valid_file();
  f.examples[1].endings[2].clear();
  expect_error(write(dir, f), {"example 1 at byte 1064: completion 2 is empty (0 tokens)"});
  f = valid_file();
  f.examples[1].context.clear();
  expect_error(write(dir, f), {"example 1 at byte 1064: empty context"});
}

TEST(EvalFile, RefusesTokensOutsideTheVocabulary) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.examples[1].endings[3][1] = 50257;
  expect_error(write(dir, f), {"example 1 at byte 1064: completion 3 token 1 (byte 1094) is 50257, not below the "
                               "vocabulary size 50257",
                               "another tokenizer"});
  expect_error(write(dir, valid_file()), {"example 0 at byte 1024: context token 1 (byte 1038) is 3290"}, 1000);
}

TEST(EvalFile, RefusesACountThatDisagreesAndTrailingBytes) {
  TempDir dir("evalfile");
  auto f = valid_file();
  f.count = 4;
  expect_error(write(dir, f), {"header declares 4 examples (header[2]) but the file ends after 3, at byte 1138"});
  f.count = 2;
  expect_error(write(dir, f), {"header declares 2 examples (header[2]) but another example starts at byte 1096"});
  f = valid_file();
  f.trailing = "xyz";
  expect_error(write(dir, f), {"3 trailing bytes at byte 1138 after the 3 declared examples"});
  f = valid_file();
  f.longest = 40;
  expect_error(write(dir, f), {"header[3] declares the longest example as 40 bytes but the longest is 42"});
}

}  // namespace
}  // namespace k3lab::train
