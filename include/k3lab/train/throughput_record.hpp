#pragma once
// Measured training throughput, kept so that `k3lab plan` can turn tokens into GPU-hours from a
// measurement instead of the assumed-peak floor. `k3lab bench train` appends one record per arm to a
// JSON-lines file (default <build>/bench-records/train.jsonl: beside the k3lab binary); `plan` reads
// it and uses a record whose device and shape both match an arm. Torch-free.
//
// One line per record:
//   {"record": "k3lab-train-throughput", "version": 1, "device": "cuda: NVIDIA H200", "date": "<UTC ISO 8601>",
//    "arm": "all-kda", "shape": {<ThroughputShape>}, "tokens_per_s": 12345.6, "steps": 5, "warmup": 2}
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::train {

// What a training step's cost depends on, as `k3lab bench train` builds its model (train/bench.hpp).
struct ThroughputShape {
  std::string schedule;  // one mixer letter per layer (models/layer_schedule.hpp), e.g. "KKKMKKKMKKKM"
  std::int64_t d_model = 0;
  std::int64_t n_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t mla_kv_latent_dim = 0;
  std::int64_t kda_chunk_size = 0;
  std::int64_t ffn_size = 0;
  std::int64_t vocab_size = 0;
  std::int64_t sequence_length = 0;
  std::int64_t batch_rows = 0;  // rows per forward (the training micro-batch)
  std::string dtype = "float32";

  std::int64_t n_layers() const { return static_cast<std::int64_t>(schedule.size()); }
  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the missing or mistyped field.
  static ThroughputShape from_json(const nlohmann::json& j);
  // "KKKM... d768 h12x64 kv256 c64 ffn2048 v50304 T8000 B1 float32": readable and unique per shape.
  std::string key() const;
  bool operator==(const ThroughputShape&) const = default;
};

struct ThroughputRecord {
  std::string device;  // "cuda: <GPU model>" or "cpu: <CPU model>, <n> threads"
  std::string date;    // UTC, ISO 8601
  std::string arm;     // the benchmark's arm name (informative; the shape decides a match)
  ThroughputShape shape;
  double tokens_per_s = 0;
  std::int64_t steps = 0;
  std::int64_t warmup = 0;

  nlohmann::json to_json() const;
  static ThroughputRecord from_json(const nlohmann::json& j);  // throws std::invalid_argument naming the field
  std::string key() const { return device + " | " + shape.key(); }
};

// The records of one file and a warning per line that was not a record ("<file>:<line>: <why>; ignored").
struct ThroughputRecords {
  std::vector<ThroughputRecord> records;  // in file order
  std::vector<std::string> warnings;
};

// Reads a JSON-lines record file. A missing file gives no records and no warning; a malformed or
// foreign line is skipped with a warning naming file and line; blank lines are skipped.
ThroughputRecords read_throughput_records(const std::filesystem::path& file);

// Appends one line (creating the file and its folder); throws std::runtime_error naming the file.
void append_throughput_record(const std::filesystem::path& file, const ThroughputRecord& record);

// <folder of the running k3lab binary>/bench-records/train.jsonl: the build folder for a built tree.
std::filesystem::path default_throughput_records_path();

// The newest record (latest date, then latest line) whose device contains `device_kind`
// (case-insensitive, e.g. "H200" or "cpu") and whose shape equals `shape`; nullopt when none does.
std::optional<ThroughputRecord> match_throughput_record(const std::vector<ThroughputRecord>& records,
                                                        const std::string& device_kind, const ThroughputShape& shape);

}  // namespace k3lab::train
