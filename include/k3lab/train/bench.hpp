#pragma once
// Training-step benchmark: tokens/s and a model-FLOPs-utilisation estimate per arm at one shared
// shape. The caller names the arms, each a decoder layer pattern (`k3lab bench train` and
// k3lab_train_bench pass hybrid-attention's: full attention, all-KDA, 3 KDA : 1 MLA).
//
// Options (JSON object; every key optional, defaults in brackets):
//   d_model [256], n_layers [4] (a multiple of every arm's pattern length), n_heads [4], head_dim [64],
//   mla_kv_latent_dim [128],
//   kda_chunk_size [64], ffn_size [4 x d_model], vocab_size [256], sequence_length [512],
//   batch_rows [4], steps [5], warmup [2], device ["auto"], threads [0: LibTorch default],
//   peak_flops [kH200Bf16Matmul on CUDA (train/hardware_peak.hpp); none on CPU],
//   arms [all the caller's; a list of their names], schedule [none: one arm with exactly this layer
//   schedule, e.g. "KKKMKKKM"; n_layers then defaults to its length], output ["md" | "json"],
//   record [none: a JSON-lines file to append one throughput record per arm to (train/throughput_record.hpp)]
// The model is hybrid-attention's arm model at the given size (bench_model_config), so a record's shape
// matches that experiment's arms in `k3lab plan`.
// Model FLOPs per token: 6 x matmul parameters (including the tied output head) plus causal
// attention scores (3 x T x H x (qk + v) per MLA layer) plus the chunkwise KDA work
// (3 x 2 x (2CK + CV + 4KV) per KDA head); an estimate, stated as such in the output.
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/models/model_config.hpp"
#include "k3lab/train/throughput_record.hpp"

namespace k3lab::train {

// One arm: its name and its layer pattern (models/layer_schedule.hpp letters, e.g. "KKKM"), repeated
// over n_layers.
struct BenchArm {
  std::string name;
  std::string pattern;
};

// The arms `k3lab bench train` and k3lab_train_bench compare when given none: hybrid-attention's three
// designs (full attention "M", all-KDA "K", 3 KDA : 1 MLA "KKKM"), the shapes issue 17's throughput goals name.
std::vector<BenchArm> default_bench_arms();

// The model the benchmark trains for a shape: KDA and MLA mixers as hybrid-attention configures them
// (MLA rope dimension head_dim / 2, full-rank query), SwiGLU, tied embeddings.
models::ModelConfig bench_model_config(const ThroughputShape& shape);

// The benchmark shape whose model is exactly `model` at this sequence length and micro-batch, or the
// reason there is none (the JSON paths where bench_model_config would build a different model).
struct BenchShape {
  std::optional<ThroughputShape> shape;
  std::string reason;  // empty when shape is set
};
BenchShape bench_shape(const models::ModelConfig& model, std::int64_t sequence_length, std::int64_t batch_rows);

// The command that measures `shape` on `device` ("cuda" or "cpu") and appends its record to `record_file`.
std::string bench_train_command(const ThroughputShape& shape, const std::string& device,
                                const std::filesystem::path& record_file);

// Prints one row per arm; returns 0, or 2 with a message on stderr for bad options (and for no arms:
// the caller passes them).
int run_train_bench(const nlohmann::json& options, std::ostream& out, const std::vector<BenchArm>& arms = {});

}  // namespace k3lab::train
