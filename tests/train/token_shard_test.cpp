// The llm.c .bin shard format: round trips in both widths and one test per header error, each
// checking that the message names the file and the problem.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <fstream>

#include "k3lab/train/token_shard.hpp"
#include "k3lab/train/token_stream.hpp"
#include "test_support.hpp"

namespace k3lab::train {
namespace {

using testing::TempDir;

// Writes a shard by hand (independently of write_token_shard): header ints, then raw body bytes.
void write_raw(const std::filesystem::path& path, std::array<std::int32_t, 256> header, const std::string& body) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), 1024);
  out.write(body.data(), static_cast<std::streamsize>(body.size()));
}

std::array<std::int32_t, 256> header(std::int32_t magic, std::int32_t version, std::int32_t count) {
  std::array<std::int32_t, 256> h{};
  h[0] = magic;
  h[1] = version;
  h[2] = count;
  return h;
}

void expect_error(const std::filesystem::path& path, const std::string& fragment) {
  try {
    inspect_token_shard(path);
    FAIL() << "expected an error containing \"" << fragment << "\"";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path.string()), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(TokenShard, RoundTripsUint16) {
  TempDir dir("shard");
  const std::vector<std::uint32_t> tokens = {0, 1, 255, 256, 50256, 65535, 7};
  write_token_shard(dir.path / "a.bin", tokens, TokenWidth::U16);
  EXPECT_EQ(std::filesystem::file_size(dir.path / "a.bin"), 1024u + 2u * tokens.size());
  const auto info = inspect_token_shard(dir.path / "a.bin");
  EXPECT_EQ(info.width, TokenWidth::U16);
  EXPECT_EQ(info.num_tokens, 7);
  EXPECT_EQ(read_token_shard(dir.path / "a.bin"), tokens);
}

TEST(TokenShard, RoundTripsUint32) {
  TempDir dir("shard");
  const std::vector<std::uint32_t> tokens = {0, 65536, 128255, 4000000000u};
  write_token_shard(dir.path / "b.bin", tokens, TokenWidth::U32);
  EXPECT_EQ(std::filesystem::file_size(dir.path / "b.bin"), 1024u + 4u * tokens.size());
  EXPECT_EQ(inspect_token_shard(dir.path / "b.bin").width, TokenWidth::U32);
  EXPECT_EQ(read_token_shard(dir.path / "b.bin"), tokens);
}

TEST(TokenShard, ReadsAHandWrittenLlmcShard) {
  TempDir dir("shard");
  std::string body(6, '\0');
  const std::uint16_t values[3] = {50256, 464, 13};  // little-endian uint16, as llm.c writes them
  std::memcpy(body.data(), values, 6);
  write_raw(dir.path / "fineweb_val_000000.bin", header(20240520, 1, 3), body);
  EXPECT_EQ(read_token_shard(dir.path / "fineweb_val_000000.bin"), (std::vector<std::uint32_t>{50256, 464, 13}));
}

TEST(TokenShard, WriterRejectsTokensTooWideForUint16) {
  TempDir dir("shard");
  const std::vector<std::uint32_t> tokens = {1, 70000};
  EXPECT_THROW(write_token_shard(dir.path / "c.bin", tokens, TokenWidth::U16), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "c.bin"));
}

TEST(TokenShard, MissingFile) {
  TempDir dir("shard");
  expect_error(dir.path / "missing.bin", "not found");
}

TEST(TokenShard, ShorterThanHeader) {
  TempDir dir("shard");
  std::ofstream(dir.path / "short.bin") << "tiny";
  expect_error(dir.path / "short.bin", "shorter than the 1024-byte header");
}

TEST(TokenShard, UnknownMagicSuggestsHeaderlessNanoGpt) {
  TempDir dir("shard");
  write_raw(dir.path / "raw.bin", header(12345, 1, 1), std::string(2, '\0'));
  expect_error(dir.path / "raw.bin", "unknown magic 12345");
  expect_error(dir.path / "raw.bin", "headerless nanoGPT");
}

TEST(TokenShard, EvalExampleFileIsNotAShard) {
  TempDir dir("shard");
  write_raw(dir.path / "hellaswag_val.bin", header(20240522, 1, 1), std::string(2, '\0'));
  expect_error(dir.path / "hellaswag_val.bin", "evaluation example file");
}

TEST(TokenShard, WrongVersionForUint16Magic) {
  TempDir dir("shard");
  write_raw(dir.path / "v.bin", header(20240520, 7, 1), std::string(2, '\0'));
  expect_error(dir.path / "v.bin", "needs version 1, found 7");
}

TEST(TokenShard, WrongVersionForUint32Magic) {
  TempDir dir("shard");
  write_raw(dir.path / "v.bin", header(20240801, 1, 1), std::string(4, '\0'));
  expect_error(dir.path / "v.bin", "needs version 7, found 1");
}

TEST(TokenShard, NonPositiveTokenCount) {
  TempDir dir("shard");
  write_raw(dir.path / "zero.bin", header(20240520, 1, 0), "");
  expect_error(dir.path / "zero.bin", "declares 0 tokens");
  write_raw(dir.path / "neg.bin", header(20240520, 1, -5), "");
  expect_error(dir.path / "neg.bin", "declares -5 tokens");
}

TEST(TokenShard, TruncatedBody) {
  TempDir dir("shard");
  write_raw(dir.path / "trunc.bin", header(20240520, 1, 10), std::string(19, '\0'));
  expect_error(dir.path / "trunc.bin", "truncated");
}

TEST(TokenShard, ExtraBytesAfterTheTokens) {
  TempDir dir("shard");
  write_raw(dir.path / "extra.bin", header(20240801, 7, 2), std::string(9, '\0'));
  expect_error(dir.path / "extra.bin", "1 bytes after the 2 declared tokens");
}

TEST(TokenShard, MappedCopyIsBoundsChecked) {
  TempDir dir("shard");
  const std::vector<std::uint32_t> tokens = {5, 6, 7};
  write_token_shard(dir.path / "m.bin", tokens);
  MappedTokenShard shard(dir.path / "m.bin");
  std::int64_t out[3];
  shard.copy(1, 2, out);
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[1], 7);
  EXPECT_THROW(shard.copy(2, 2, out), std::out_of_range);
}

TEST(TokenStream, ReadsAcrossShardBoundariesAsOneSequence) {
  TempDir dir("stream");
  write_token_shard(dir.path / "x_train_000001.bin", std::vector<std::uint32_t>{1, 2, 3});
  write_token_shard(dir.path / "x_train_000002.bin", std::vector<std::uint32_t>{4, 5}, TokenWidth::U32);
  write_token_shard(dir.path / "x_train_000003.bin", std::vector<std::uint32_t>{6, 7, 8, 9});
  const auto stream = TokenStream::from_shards(
      {dir.path / "x_train_000001.bin", dir.path / "x_train_000002.bin", dir.path / "x_train_000003.bin"});
  ASSERT_EQ(stream.size(), 9);
  EXPECT_EQ(stream.slice(0, 9), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(stream.slice(2, 5), (std::vector<std::int64_t>{3, 4, 5, 6, 7}));
  const auto sub = stream.sub(2, 5);
  EXPECT_EQ(sub.size(), 5);
  EXPECT_EQ(sub.slice(1, 3), (std::vector<std::int64_t>{4, 5, 6}));
  EXPECT_THROW(stream.slice(8, 2), std::out_of_range);
  const auto memory = TokenStream::from_tokens({10, 11, 12});
  EXPECT_EQ(memory.slice(1, 2), (std::vector<std::int64_t>{11, 12}));
}

}  // namespace
}  // namespace k3lab::train
