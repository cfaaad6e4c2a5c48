#include "k3lab/validate/repo_snapshot.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "detail/repo_hash.hpp"
#include "detail/text.hpp"

namespace k3lab::validate {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 8> kPermissiveLicenses = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
                                                                 "ISC", "Zlib",       "0BSD",         "Unlicense"};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string() + ": check that it exists and is readable");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string sha256_hex(std::string_view bytes) {
  core::Sha256 hasher;
  hasher.update(bytes);
  return hasher.hex_digest();
}

std::string pin_string(const nlohmann::json& json, const char* field) {
  if (!json.contains(field) || !json[field].is_string() || json[field].get<std::string>().empty()) {
    throw std::invalid_argument(std::string("parameters.repository.") + field + " must be a non-empty string");
  }
  return json[field].get<std::string>();
}

std::string install_hint(const RepositoryPin& pin) {
  return "install it with `sudo apt-get install " + pin.package + "=" + pin.version +
         "` (scripts/setup.sh installs it)";
}

void check_version(const RepositoryPin& pin, const fs::path& dpkg_status) {
  std::error_code ec;
  if (!fs::exists(dpkg_status, ec)) return;  // no dpkg database: the file hashes alone pin the repository
  const std::optional<std::string> installed = installed_debian_version(pin.package, dpkg_status);
  if (!installed) {
    throw std::runtime_error("context-probe: the repository family needs the Debian package " + pin.package + " " +
                             pin.version + ", which is not installed; " + install_hint(pin));
  }
  if (*installed != pin.version) {
    throw RepositoryPinError(dpkg_status, "the protocol pins " + pin.package + " " + pin.version + " but " +
                                              *installed + " is installed; " + install_hint(pin) +
                                              ", or pin the installed version with scripts/pin-repository.sh and "
                                              "re-freeze the protocol");
  }
}

// "<64 hex>  <path>" lines, as sha256sum writes them.
std::vector<std::pair<std::string, std::string>> parse_hash_list(const std::string& text, const fs::path& list) {
  std::vector<std::pair<std::string, std::string>> entries;
  std::size_t line_number = 0;
  for (std::string_view line : detail::split_lines(text)) {
    ++line_number;
    if (line.empty()) continue;
    const bool hex = line.size() > 66 && std::all_of(line.begin(), line.begin() + 64, [](char c) {
      return detail::is_digit(c) || (c >= 'a' && c <= 'f');
    });
    if (!hex || line.substr(64, 2) != "  ") {
      throw RepositoryPinError(list, "line " + std::to_string(line_number) +
                                         " is not \"<sha256>  <path>\"; regenerate the list with "
                                         "scripts/pin-repository.sh");
    }
    entries.emplace_back(std::string(line.substr(0, 64)), std::string(line.substr(66)));
  }
  return entries;
}

}  // namespace

nlohmann::json RepositoryPin::to_json() const {
  return {{"package", package},
          {"version", version},
          {"upstream", upstream},
          {"upstream_commit", upstream_commit ? nlohmann::json(*upstream_commit) : nlohmann::json(nullptr)},
          {"license", license},
          {"license_file", license_file},
          {"root", root},
          {"files", files},
          {"files_sha256", files_sha256},
          {"file_count", file_count}};
}

RepositoryPin RepositoryPin::from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::invalid_argument("parameters.repository must be an object");
  RepositoryPin pin;
  pin.package = pin_string(json, "package");
  pin.version = pin_string(json, "version");
  pin.upstream = pin_string(json, "upstream");
  if (json.contains("upstream_commit") && !json["upstream_commit"].is_null())
    pin.upstream_commit = pin_string(json, "upstream_commit");
  pin.license = pin_string(json, "license");
  if (std::find(kPermissiveLicenses.begin(), kPermissiveLicenses.end(), pin.license) == kPermissiveLicenses.end()) {
    throw std::invalid_argument("parameters.repository.license \"" + pin.license +
                                "\" is not permissive (MIT, Apache-2.0, BSD-2-Clause, BSD-3-Clause, ISC, Zlib, 0BSD, "
                                "Unlicense); pin a permissively licensed package");
  }
  pin.license_file = pin_string(json, "license_file");
  pin.root = pin_string(json, "root");
  pin.files = pin_string(json, "files");
  pin.files_sha256 = pin_string(json, "files_sha256");
  if (!json.contains("file_count") || !json["file_count"].is_number_integer() || json["file_count"].get<long long>() < 1)
    throw std::invalid_argument("parameters.repository.file_count must be a positive integer");
  pin.file_count = json["file_count"].get<std::size_t>();
  return pin;
}

RepositoryPinError::RepositoryPinError(const fs::path& file, const std::string& problem)
    : core::ProtocolError(file, {{"parameters.repository", problem}}) {}

std::string repository_files_sha256(const std::vector<SnapshotFile>& files) {
  core::Sha256 hasher;
  for (const auto& file : files) detail::hash_repository_file(hasher, file.path, file.content);
  return hasher.hex_digest();
}

std::shared_ptr<const RepositorySnapshot> make_repository_snapshot(std::vector<SnapshotFile> files,
                                                                   nlohmann::json manifest, std::string license,
                                                                   std::string root) {
  auto snapshot = std::make_shared<RepositorySnapshot>();
  std::vector<PythonModule> modules;
  for (auto& file : files) {
    if (file.content.empty() || file.content.back() != '\n') file.content += '\n';
    if (file.path.size() > 3 && file.path.substr(file.path.size() - 3) == ".py")
      modules.push_back(analyze_python_module(file.path, file.content));
  }
  snapshot->root = std::move(root);
  snapshot->manifest = std::move(manifest);
  snapshot->license = std::move(license);
  snapshot->sha256 = repository_files_sha256(files);
  snapshot->files = std::move(files);
  snapshot->python = std::make_shared<const PythonRepository>(std::move(modules));
  snapshot->traced_imports = snapshot->python->traced_imports();
  return snapshot;
}

std::optional<std::string> installed_debian_version(const std::string& package, const fs::path& status_file) {
  const std::string text = read_file(status_file);
  bool in_package = false;
  bool installed = false;
  std::string version;
  for (std::string_view line : detail::split_lines(text)) {
    if (line.empty()) {
      if (in_package && installed && !version.empty()) return version;
      in_package = installed = false;
      version.clear();
    } else if (line.substr(0, 9) == "Package: ") {
      in_package = line.substr(9) == package;
    } else if (line.substr(0, 8) == "Status: ") {
      installed = line.substr(8) == "install ok installed";
    } else if (line.substr(0, 9) == "Version: ") {
      version = std::string(line.substr(9));
    }
  }
  if (in_package && installed && !version.empty()) return version;
  return std::nullopt;
}

std::shared_ptr<const RepositorySnapshot> load_pinned_repository(const RepositoryPin& pin,
                                                                 const fs::path& protocol_folder,
                                                                 const fs::path& dpkg_status) {
  check_version(pin, dpkg_status);
  const fs::path list = protocol_folder / pin.files;
  std::error_code ec;
  if (!fs::is_regular_file(list, ec)) {
    throw std::runtime_error("context-probe: the repository's hash list " + list.string() +
                             " is missing; restore it from the k3lab checkout (`git checkout -- experiments/" +
                             pin.files + "`)");
  }
  const std::string list_text = read_file(list);
  if (sha256_hex(list_text) != pin.files_sha256) {
    throw RepositoryPinError(list, "this hash list differs from the one the protocol froze (files_sha256 " +
                                       pin.files_sha256 + "); restore it with `git checkout -- experiments/" +
                                       pin.files + "`");
  }
  const auto entries = parse_hash_list(list_text, list);
  if (entries.size() != pin.file_count) {
    throw RepositoryPinError(list, "lists " + std::to_string(entries.size()) + " files, the protocol pins " +
                                       std::to_string(pin.file_count));
  }
  std::vector<SnapshotFile> files;
  files.reserve(entries.size());
  for (const auto& [hash, path] : entries) {
    const fs::path file = fs::path(pin.root) / path;
    if (!fs::is_regular_file(file, ec)) {
      throw std::runtime_error("context-probe: the pinned repository file " + file.string() + " is missing; " +
                               install_hint(pin));
    }
    std::string content = read_file(file);
    if (sha256_hex(content) != hash) {
      throw RepositoryPinError(file, "differs from the pinned file (SHA-256 " + hash + "); reinstall " +
                                         pin.package + " " + pin.version + " (`sudo apt-get install --reinstall " +
                                         pin.package + "`)");
    }
    files.push_back({path, std::move(content)});
  }
  return make_repository_snapshot(std::move(files), pin.to_json(), pin.license, pin.root);
}

}  // namespace k3lab::validate
