#pragma once
// Hook for a pinned real repository snapshot in the repository family (experiment 1).
//
// By default the repository family uses a synthetic pseudo-repository generated from the seed
// (MIT, ours). To use a real, permissively licensed code snapshot instead, put its files in a
// directory together with a manifest named k3lab-snapshot.json:
//   {"name": "<project>", "revision": "<commit or tag>", "license": "<SPDX id>", "source": "<url>"}
// The license must be one of MIT, Apache-2.0, BSD-2-Clause, BSD-3-Clause, ISC, Zlib, 0BSD,
// Unlicense. load_repository_snapshot() reads every regular UTF-8/ASCII text file (no NUL byte,
// at most 256 KiB), sorted by relative path, and hashes them. The snapshot's files then fill the
// document (in path order) before any synthetic file; the traced definition chain and its decoys
// remain synthetic files, because a question with a checkable answer cannot be derived from arbitrary
// code automatically. Snapshot files whose path collides with a traced file are skipped.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::validate {

inline constexpr const char* kSnapshotManifestName = "k3lab-snapshot.json";
inline constexpr std::size_t kSnapshotMaxFileBytes = 256 * 1024;

struct SnapshotFile {
  std::string path;     // relative, '/'-separated
  std::string content;  // ends with '\n' (one is added when missing)
};

struct RepositorySnapshot {
  std::string root;            // the directory it was loaded from
  nlohmann::json manifest;     // the k3lab-snapshot.json object
  std::vector<SnapshotFile> files;
  std::size_t skipped_files = 0;  // binary or larger than kSnapshotMaxFileBytes
  std::string sha256;             // repository_files_sha256(files)
};

// Throws std::runtime_error naming the directory/field and the fix when the directory, the manifest
// or its fields are missing or invalid, or when no usable file is found.
RepositorySnapshot load_repository_snapshot(const std::filesystem::path& directory);

// SHA-256 over "path\0content\0" for every file in the given order: the repository hash recorded for
// both synthetic and pinned repositories.
std::string repository_files_sha256(const std::vector<SnapshotFile>& files);

}  // namespace k3lab::validate
