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
//   peak_flops [795e12 on CUDA, the bf16 matmul rate measured on the H200; none on CPU],
//   arms [all the caller's; a list of their names], output ["md" | "json"]
// Model FLOPs per token: 6 x matmul parameters (including the tied output head) plus causal
// attention scores (3 x T x H x (qk + v) per MLA layer) plus the chunkwise KDA work
// (3 x 2 x (2CK + CV + 4KV) per KDA head); an estimate, stated as such in the output.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// Prints one row per arm; returns 0, or 2 with a message on stderr for bad options (and for no arms:
// the caller passes them).
int run_train_bench(const nlohmann::json& options, std::ostream& out, const std::vector<BenchArm>& arms = {});

}  // namespace k3lab::train
