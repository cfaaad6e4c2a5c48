#pragma once
// Pinned training data (docs/data.md, "Pinned datasets"): a dataset folder's manifest.json lists every
// shard's name, size, token count and SHA-256 with the tokenizer and the source and licence the user
// states; a protocol freezes the manifest's SHA-256 (data.manifest_sha256), and a run refuses a folder
// whose manifest or shards differ. Shards are hashed in full on first use; the result is cached by
// (size, mtime) in manifest.hashes.json beside the manifest, and every later use re-checks each shard's
// size and the hash of a few fixed blocks.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"

namespace k3lab::train {

inline constexpr const char* kDatasetManifestFile = "manifest.json";
inline constexpr const char* kShardHashCacheFile = "manifest.hashes.json";
inline constexpr const char* kDatasetManifestFormat = "k3lab-dataset-manifest-1";
// The sampled re-check: kSampleBlocks blocks of kSampleBlockBytes, evenly spaced from the first byte
// to the last (a file no longer than kSampleBlocks blocks is read whole).
inline constexpr std::uintmax_t kSampleBlockBytes = 64 * 1024;
inline constexpr int kSampleBlocks = 5;

// A folder that does not match the protocol's pin: `run` exits 3 (the protocol's data differs from
// the folder) before any record is written. The message names the file and the fix.
class DataPinError : public core::ProtocolError {
 public:
  DataPinError(const std::filesystem::path& file, const std::string& problem);
};

struct ManifestShard {
  std::string name;  // file name inside the folder
  std::uintmax_t bytes = 0;
  std::int64_t tokens = 0;
  int token_bytes = 0;  // 2 (uint16) or 4 (uint32)
  std::string sha256;
};

struct DatasetManifest {
  std::string dataset;  // the folder's name: the protocol's data.dataset
  std::string tokenizer;
  std::string source;
  std::string licence;
  std::vector<ManifestShard> shards;  // sorted by name
};

struct ManifestRequest {
  std::filesystem::path folder;
  std::string tokenizer;
  std::string source;
  std::string licence;
};

// Reads every *train*.bin and *val*.bin of the folder through the shard reader (each malformed field
// its own error) and hashes it. Throws std::invalid_argument for an empty source, licence or tokenizer
// and std::runtime_error for a folder without shards or a shard the reader rejects.
DatasetManifest build_dataset_manifest(const ManifestRequest& request);

// The manifest's bytes: fixed key order, shards sorted by name, two-space indent, final newline.
std::string dataset_manifest_text(const DatasetManifest& manifest);

// Parses manifest.json text; throws DataPinError naming `file` and the malformed field.
DatasetManifest parse_dataset_manifest(const std::string& text, const std::filesystem::path& file);

// Writes <folder>/manifest.json (atomically) and records the shard hashes just computed in the hash
// cache, so the first run needs no full pass. Returns the manifest's SHA-256.
std::string write_dataset_manifest(const DatasetManifest& manifest, const std::filesystem::path& folder);

struct ByteRange {
  std::uintmax_t offset = 0;
  std::uintmax_t length = 0;
};
// The fixed blocks of a file of `file_bytes` bytes that the per-use re-check hashes.
std::vector<ByteRange> sampled_blocks(std::uintmax_t file_bytes);

// SHA-256 of the whole file, and of its sampled blocks concatenated.
std::string file_sha256(const std::filesystem::path& path);
std::string sampled_sha256(const std::filesystem::path& path);

// Checks `folder` against the protocol's pin: a manifest exists, hashes to `pinned_sha256` (null: the
// protocol pins nothing yet), lists exactly the folder's shards, and every shard matches (full hash on
// first use or after a size/mtime change, else size and sampled hash against the cache). Throws
// DataPinError. Returns the provenance a record carries: manifest_sha256, source, licence, tokenizer.
nlohmann::json verify_pinned_folder(const std::filesystem::path& folder,
                                    const std::optional<std::string>& pinned_sha256);

}  // namespace k3lab::train
