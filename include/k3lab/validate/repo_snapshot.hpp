#pragma once
// The pinned real repository of the repository family (experiment 1): the Python files of an installed
// Debian package, pinned in the protocol by package version and a committed list of file hashes
// (`sha256sum` format, written by scripts/pin-repository.sh; docs/context-probe.md says how to pin).
//
// load_pinned_repository() refuses, before any call is made, a package that is not installed (exit 1,
// with the apt command) and a different version, list or file (RepositoryPinError: exit 3, like a
// protocol that does not match its inputs). The loaded files are analysed once (python_trace.hpp):
// the repository family's questions, ground truth and decoys come from that analysis.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/validate/python_trace.hpp"

namespace k3lab::validate {

// parameters.repository of the context-probe protocol.
struct RepositoryPin {
  std::string package;                         // Debian package, e.g. "python3-sympy"
  std::string version;                         // its Debian version, e.g. "1.11.1-1"
  std::string upstream;                        // upstream release and tag
  std::optional<std::string> upstream_commit;  // when the package records one
  std::string license;                         // SPDX id; must be permissive
  std::string license_file;                    // the package's copyright file
  std::string root;                            // the folder the listed paths are relative to
  std::string files;                           // the hash list, relative to the protocol folder
  std::string files_sha256;                    // SHA-256 of the hash list
  std::size_t file_count = 0;

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the field for a missing or malformed one, or a license that is
  // not permissive.
  static RepositoryPin from_json(const nlohmann::json& json);
};

// A pinned file that differs from the protocol's pin: the run would test another repository.
class RepositoryPinError : public core::ProtocolError {
 public:
  RepositoryPinError(const std::filesystem::path& file, const std::string& problem);
};

struct SnapshotFile {
  std::string path;     // relative, '/'-separated
  std::string content;  // ends with '\n' (one is added when missing)
};

struct RepositorySnapshot {
  std::string root;         // the folder it was loaded from
  nlohmann::json manifest;  // the pin (RepositoryPin::to_json), null for an unpinned test snapshot
  std::string license;      // SPDX id
  std::vector<SnapshotFile> files;  // in the pinned order (byte order of the path)
  std::string sha256;               // repository_files_sha256(files)
  std::shared_ptr<const PythonRepository> python;          // the analysis of the .py files
  std::vector<PythonRepository::ImportTrace> traced_imports;  // python->traced_imports()
};

// Analyses in-memory files (tests, or a loader's result).
std::shared_ptr<const RepositorySnapshot> make_repository_snapshot(std::vector<SnapshotFile> files,
                                                                   nlohmann::json manifest, std::string license,
                                                                   std::string root = {});

// The installed version of a Debian package from dpkg's status database; nullopt when it is not
// installed. Throws std::runtime_error when the database cannot be read (`status_file` is missing).
std::optional<std::string> installed_debian_version(const std::string& package,
                                                    const std::filesystem::path& status_file = "/var/lib/dpkg/status");

// Checks the version (when dpkg's database exists), the list's hash and count, and every file's hash.
// std::runtime_error when the package or a file is missing (the message gives the install command);
// RepositoryPinError when the version, the list or a file differs.
std::shared_ptr<const RepositorySnapshot> load_pinned_repository(const RepositoryPin& pin,
                                                                 const std::filesystem::path& protocol_folder,
                                                                 const std::filesystem::path& dpkg_status =
                                                                     "/var/lib/dpkg/status");

// SHA-256 over "path\0content\0" for every file in the given order: the repository hash recorded for
// both synthetic and pinned repositories.
std::string repository_files_sha256(const std::vector<SnapshotFile>& files);

}  // namespace k3lab::validate
