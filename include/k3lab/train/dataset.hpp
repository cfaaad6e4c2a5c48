#pragma once
// Resolves a protocol's data.dataset id to token streams (docs/data.md):
//   builtin-tiny   the Jargon File excerpt compiled into the binary (tokenizer "bytes")
//   <name>         a directory <data root>/<name>/ of llm.c .bin shards: *train*.bin and *val*.bin
//                  (sorted by name), with a manifest.json (`k3lab data manifest` writes one; the proxy
//                  experiments' runs require it and check it against the protocol: data_manifest.hpp)
// The data root is options.data_dir, else $K3LAB_DATA_DIR, else ./data.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/train/token_stream.hpp"

namespace k3lab::train {

inline constexpr const char* kBuiltinTinyDataset = "builtin-tiny";

struct DatasetRequest {
  std::string id;
  std::string tokenizer;         // must match the dataset's (a manifest's "tokenizer", "bytes" for builtin-tiny)
  std::int64_t vocab_size = 0;   // every token must be below it (checked as batches are read)
  std::filesystem::path data_root;
  // A run's request: a dataset folder must hold a manifest whose SHA-256 is manifest_sha256 (the
  // protocol's data.manifest_sha256; null pins nothing and is refused), and shards that match it.
  bool require_pinned_manifest = false;
  std::optional<std::string> manifest_sha256 = std::nullopt;
};

struct ShardFiles {
  std::vector<std::filesystem::path> train;       // *train*.bin, sorted by name
  std::vector<std::filesystem::path> validation;  // *val*.bin, sorted by name
};

// The shards of a dataset folder, as many as there are.
ShardFiles list_shard_files(const std::filesystem::path& dir);
// The same; throws std::runtime_error unless there is at least one of each.
ShardFiles find_shard_files(const std::filesystem::path& dir);

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
