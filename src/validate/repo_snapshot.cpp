#include "k3lab/validate/repo_snapshot.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "detail/repo_hash.hpp"

namespace k3lab::validate {
namespace {

constexpr std::array<std::string_view, 8> kPermissiveLicenses = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
                                                                 "ISC", "Zlib",       "0BSD",         "Unlicense"};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string() + ": check its permissions");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string manifest_string(const nlohmann::json& manifest, const std::string& field, const std::filesystem::path& file) {
  if (!manifest.contains(field) || !manifest[field].is_string() || manifest[field].get<std::string>().empty()) {
    throw std::runtime_error(file.string() + ": field \"" + field +
                             "\" is missing or not a non-empty string; the manifest needs \"name\", \"revision\" "
                             "and \"license\" (an SPDX id)");
  }
  return manifest[field].get<std::string>();
}

}  // namespace

std::string repository_files_sha256(const std::vector<SnapshotFile>& files) {
  core::Sha256 hasher;
  for (const auto& file : files) detail::hash_repository_file(hasher, file.path, file.content);
  return hasher.hex_digest();
}

RepositorySnapshot load_repository_snapshot(const std::filesystem::path& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    throw std::runtime_error("repository snapshot: " + directory.string() +
                             " is not a directory; point the hook at the folder holding the pinned snapshot");
  }
  const fs::path manifest_path = directory / kSnapshotManifestName;
  if (!fs::is_regular_file(manifest_path, ec)) {
    throw std::runtime_error("repository snapshot: " + manifest_path.string() +
                             " is missing; add it with {\"name\", \"revision\", \"license\", \"source\"}");
  }
  RepositorySnapshot snapshot;
  snapshot.root = directory.string();
  try {
    snapshot.manifest = nlohmann::json::parse(read_file(manifest_path));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(manifest_path.string() + ": not valid JSON (" + e.what() + "); fix the manifest");
  }
  if (!snapshot.manifest.is_object()) {
    throw std::runtime_error(manifest_path.string() + ": must be a JSON object with name, revision and license");
  }
  manifest_string(snapshot.manifest, "name", manifest_path);
  manifest_string(snapshot.manifest, "revision", manifest_path);
  const std::string license = manifest_string(snapshot.manifest, "license", manifest_path);
  if (std::find(kPermissiveLicenses.begin(), kPermissiveLicenses.end(), license) == kPermissiveLicenses.end()) {
    throw std::runtime_error(manifest_path.string() + ": license \"" + license +
                             "\" is not on the permissive list (MIT, Apache-2.0, BSD-2-Clause, BSD-3-Clause, ISC, "
                             "Zlib, 0BSD, Unlicense); choose a permissively licensed snapshot");
  }

  std::vector<fs::path> paths;
  for (const auto& entry : fs::recursive_directory_iterator(directory, fs::directory_options::skip_permission_denied)) {
    if (!entry.is_regular_file()) continue;
    if (entry.path() == manifest_path) continue;
    paths.push_back(entry.path());
  }
  std::vector<SnapshotFile> files;
  for (const auto& path : paths) {
    if (fs::file_size(path) > kSnapshotMaxFileBytes) {
      ++snapshot.skipped_files;
      continue;
    }
    std::string content = read_file(path);
    if (content.find('\0') != std::string::npos) {
      ++snapshot.skipped_files;
      continue;
    }
    if (content.empty() || content.back() != '\n') content += '\n';
    files.push_back({fs::relative(path, directory).generic_string(), std::move(content)});
  }
  std::sort(files.begin(), files.end(), [](const SnapshotFile& a, const SnapshotFile& b) { return a.path < b.path; });
  if (files.empty()) {
    throw std::runtime_error("repository snapshot: " + directory.string() +
                             " holds no usable text file (binary files and files over 256 KiB are skipped)");
  }
  snapshot.files = std::move(files);
  snapshot.sha256 = repository_files_sha256(snapshot.files);
  return snapshot;
}

}  // namespace k3lab::validate
