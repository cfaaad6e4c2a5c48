// Throughput records (train/throughput_record.hpp): a written record reads back equal; malformed or
// foreign lines are skipped with a warning naming file and line; a match needs the same shape and a
// device name containing the kind, and takes the newest.
#include <gtest/gtest.h>

#include <fstream>

#include "common/temp_dir.hpp"
#include "k3lab/train/throughput_record.hpp"

namespace k3lab::train {
namespace {

ThroughputShape throughput_test_shape() {
  ThroughputShape s;
  s.schedule = "KKKM";
  s.d_model = 64;
  s.n_heads = 2;
  s.head_dim = 32;
  s.mla_kv_latent_dim = 16;
  s.kda_chunk_size = 16;
  s.ffn_size = 96;
  s.vocab_size = 256;
  s.sequence_length = 64;
  s.batch_rows = 2;
  return s;
}

ThroughputRecord throughput_test_record(const std::string& device, const std::string& date, double rate) {
  ThroughputRecord r;
  r.device = device;
  r.date = date;
  r.arm = "hybrid";
  r.shape = throughput_test_shape();
  r.tokens_per_s = rate;
  r.steps = 5;
  r.warmup = 2;
  return r;
}

TEST(ThroughputRecord, WrittenRecordsReadBackEqual) {
  const ::k3lab::testing::TempDir dir("k3lab-throughput-record");
  const auto file = dir.path() / "deeper" / "train.jsonl";
  append_throughput_record(file, throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 100.5));
  append_throughput_record(file, throughput_test_record("cpu: Some CPU, 2 threads", "2026-01-03T00:00:00Z", 7.25));
  const auto read = read_throughput_records(file);
  EXPECT_TRUE(read.warnings.empty());
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_EQ(read.records[0].to_json(),
            throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 100.5).to_json());
  EXPECT_EQ(read.records[1].tokens_per_s, 7.25);
  EXPECT_EQ(read.records[0].key(), "cuda: NVIDIA H200 | KKKM d64 h2x32 kv16 c16 ffn96 v256 T64 B2 float32");
}

TEST(ThroughputRecord, MalformedLinesAreNamedAndSkipped) {
  const ::k3lab::testing::TempDir dir("k3lab-throughput-malformed");
  const auto file = dir.path() / "train.jsonl";
  auto no_rate = throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 1).to_json();
  no_rate.erase("tokens_per_s");
  auto zero_rate = throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 1).to_json();
  zero_rate["tokens_per_s"] = 0;
  auto later_version = throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 1).to_json();
  later_version["version"] = 2;
  auto half_shape = throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 1).to_json();
  half_shape["shape"].erase("batch_rows");
  {
    std::ofstream out(file);
    out << throughput_test_record("cuda: NVIDIA H200", "2026-01-02T00:00:00Z", 1).to_json().dump() << "\n";  // 1: fine
    out << "not json\n";                                                                                     // 2
    out << "\n";                                                                                             // 3: blank
    out << no_rate.dump() << "\n" << zero_rate.dump() << "\n";                                               // 4, 5
    out << later_version.dump() << "\n" << half_shape.dump() << "\n";                                        // 6, 7
    out << R"({"record": "something-else"})"
        << "\n";  // 8
  }
  const auto read = read_throughput_records(file);
  EXPECT_EQ(read.records.size(), 1u);
  ASSERT_EQ(read.warnings.size(), 6u);
  const std::vector<std::string> lines = {":2: ", ":4: ", ":5: ", ":6: ", ":7: ", ":8: "};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(read.warnings[i].rfind(file.string() + lines[i], 0), 0u) << read.warnings[i];
  }
  EXPECT_NE(read.warnings[4].find("batch_rows"), std::string::npos) << read.warnings[4];
  EXPECT_TRUE(read_throughput_records(dir.path() / "absent.jsonl").records.empty());
}

TEST(ThroughputRecord, AMatchNeedsTheShapeAndTheDeviceKindAndTakesTheNewest) {
  const std::vector<ThroughputRecord> records = {
      throughput_test_record("cuda: NVIDIA H200", "2026-03-01T00:00:00Z", 2),
      throughput_test_record("cuda: NVIDIA H200", "2026-02-01T00:00:00Z", 1),
      throughput_test_record("cuda: NVIDIA A100", "2026-04-01T00:00:00Z", 3)};
  const auto h200 = match_throughput_record(records, "h200", throughput_test_shape());
  ASSERT_TRUE(h200.has_value());
  EXPECT_EQ(h200->tokens_per_s, 2);
  EXPECT_FALSE(match_throughput_record(records, "cpu", throughput_test_shape()).has_value());
  auto other = throughput_test_shape();
  other.batch_rows = 4;
  EXPECT_FALSE(match_throughput_record(records, "H200", other).has_value());
}

}  // namespace
}  // namespace k3lab::train
