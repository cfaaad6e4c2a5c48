#pragma once
// Resolves a protocol's data.dataset id to token streams (docs/data.md):
//   builtin-tiny   the Jargon File excerpt compiled into the binary (tokenizer "bytes")
//   <name>         a directory <data root>/<name>/ of llm.c .bin shards: *train*.bin and *val*.bin
//                  (sorted by name), with an optional manifest.json (scripts/build-corpus.sh writes
//                  data/jargon-file/ this way; FineWeb shards from modded-nanogpt/llm.c work as they are)
// The data root is options.data_dir, else $K3LAB_DATA_DIR, else ./data.
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/train/token_stream.hpp"

namespace k3lab::train {

inline constexpr const char* kBuiltinTinyDataset = "builtin-tiny";

struct DatasetRequest {
  std::string id;
  std::string tokenizer;         // must match the dataset's (a manifest's "tokenizer", "bytes" for builtin-tiny)
  std::int64_t vocab_size = 0;   // every token must be below it (checked as batches are read)
  std::filesystem::path data_root;
};

struct Dataset {
  std::string id;
  std::string tokenizer;
  std::int64_t vocab_size = 0;
  TokenStream train;
  TokenStream validation;
  nlohmann::json provenance;  // source, licence, hashes, shard names and token counts
};

// options.data_dir (string), else $K3LAB_DATA_DIR, else "data".
std::filesystem::path data_root_from(const nlohmann::json& options);

// Throws std::runtime_error naming the dataset, what was looked for and how to provide it.
Dataset load_dataset(const DatasetRequest& request);

}  // namespace k3lab::train
