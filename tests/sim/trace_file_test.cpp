#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "common/temp_dir.hpp"
#include "k3lab/core/sha256.hpp"
#include "k3lab/sim/trace_file.hpp"

namespace k3lab::sim {
namespace {

Trace sample() {
  Trace t;
  t.source = "unit test";
  t.generator_seed = 0x0123456789abcdefULL;
  t.records = {{0, 1, 0}, {5, 300, 17}, {5, 70000, 1}, {1'000'000'000, 4'000'000'000u, 4'000'000'000u}};
  return t;
}

TEST(TraceFile, RoundTripsAndStartsWithMagicAndVersion) {
  const Trace t = sample();
  const std::string bytes = encode_trace(t);
  ASSERT_GE(bytes.size(), 36u);
  EXPECT_EQ(bytes.substr(0, 8), "K3LABTRC");
  EXPECT_EQ(static_cast<unsigned char>(bytes[8]), 1);  // version 1, little-endian
  const Trace back = decode_trace(bytes, "<memory>");
  EXPECT_EQ(back.source, t.source);
  EXPECT_EQ(back.generator_seed, t.generator_seed);
  ASSERT_EQ(back.size(), t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(back.records[i].arrival_us, t.records[i].arrival_us);
    EXPECT_EQ(back.records[i].prompt_tokens, t.records[i].prompt_tokens);
    EXPECT_EQ(back.records[i].output_tokens, t.records[i].output_tokens);
  }
  EXPECT_EQ(trace_sha256(t), core::sha256_hex(bytes));
}

TEST(TraceFile, VarintsKeepRecordsCompact) {
  // Record 2 (delta 5, prompt 300, output 17): 1 + 2 + 1 bytes.
  Trace t;
  t.records = {{5, 300, 17}};
  EXPECT_EQ(encode_trace(t).size(), 36u + 4u);
}

TEST(TraceFile, RejectsCorruptFilesWithClearErrors) {
  const std::string good = encode_trace(sample());
  auto message_of = [](const std::string& bytes) {
    try {
      decode_trace(bytes, "x.k3tr");
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string bad_magic = good;
  bad_magic[0] = 'X';
  EXPECT_NE(message_of(bad_magic).find("bad magic"), std::string::npos);
  std::string bad_version = good;
  bad_version[8] = 2;
  EXPECT_NE(message_of(bad_version).find("version 2 is not supported"), std::string::npos);
  EXPECT_NE(message_of(good.substr(0, good.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(message_of(good + "z").find("unexpected bytes"), std::string::npos);
  EXPECT_NE(message_of(good.substr(0, 20)).find("truncated"), std::string::npos);
  std::string huge_count = good;
  huge_count[16 + 6] = 0x7f;  // claims ~1e17 records
  EXPECT_NE(message_of(huge_count).find("header claims"), std::string::npos);
}

TEST(TraceFile, RefusesToWriteInvalidTraces) {
  Trace t;
  t.records = {{10, 1, 1}, {9, 1, 1}};
  EXPECT_THROW(encode_trace(t), std::invalid_argument);
  t.records = {{0, 0, 1}};
  EXPECT_THROW(encode_trace(t), std::invalid_argument);
}

TEST(TraceFile, FileRoundTripReportsTheFileHash) {
  const k3lab::testing::TempDir dir("k3lab-sim-trace");
  const auto path = dir / "trace.k3tr";
  write_trace_file(path, sample());
  std::string sha;
  const Trace back = read_trace_file(path, &sha);
  EXPECT_EQ(sha, trace_sha256(sample()));
  EXPECT_EQ(back.size(), 4u);
  std::filesystem::remove(path);
  EXPECT_THROW(read_trace_file(path), std::runtime_error);
}

}  // namespace
}  // namespace k3lab::sim
