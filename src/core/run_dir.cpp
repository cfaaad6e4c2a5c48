#include "k3lab/core/run_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/bounded_json.hpp"
#include "k3lab/core/ledger.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {
namespace {

std::string damaged_message(const std::filesystem::path& run_dir, const std::string& problem) {
  const std::string parent = run_dir.has_parent_path() ? run_dir.parent_path().string() : ".";
  return run_dir.string() + " is a damaged run dir: " + problem +
         ". Nothing in it was changed. Restore manifest.json from a copy to resume it, or set the folder aside "
         "(move it out of " + parent + "/, or rename it to start with '.') and run again (--fresh starts a new run "
         "instead of resuming an older one)";
}

bool holds_ledger(const std::filesystem::path& run_dir) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir, error)) {
    if (is_ledger_file_name(entry.path().filename().string())) return true;
  }
  return false;
}

}  // namespace

DamagedRunDir::DamagedRunDir(const std::filesystem::path& run_dir, const std::string& problem)
    : std::runtime_error(damaged_message(run_dir, problem)), run_dir_(run_dir), problem_(problem) {}

std::string manifest_problem(const nlohmann::json& manifest) {
  using json = nlohmann::json;
  if (!manifest.is_object()) return "manifest.json is not a JSON object";
  struct Required {
    const char* key;
    bool (*ok)(const json&);
    const char* expected;
  };
  static const Required kRequired[] = {
      {"experiment", [](const json& v) { return v.is_string(); }, "a string"},
      {"profile", [](const json& v) { return v.is_string(); }, "a string"},
      {"protocol_sha256", [](const json& v) { return v.is_string(); }, "a string"},
      {"design_sha256", [](const json& v) { return v.is_string(); }, "a string"},
      {"frozen", [](const json& v) { return v.is_boolean(); }, "true or false"},
      {"unfrozen", [](const json& v) { return v.is_boolean(); }, "true or false"},
      {"protocol", [](const json& v) { return v.is_object(); }, "an object"},
      {"parameters", [](const json& v) { return v.is_object(); }, "an object"},
      {"units_planned", [](const json& v) { return v.is_number_unsigned(); }, "a count"}};
  for (const auto& field : kRequired) {
    const auto it = manifest.find(field.key);
    if (it == manifest.end()) return std::string("manifest.json has no \"") + field.key + "\"";
    if (!field.ok(*it)) return std::string("manifest.json \"") + field.key + "\" is not " + field.expected;
  }
  if (manifest.at("frozen").get<bool>() && !manifest.value("freeze_record", json()).is_object()) {
    return "manifest.json says frozen but has no \"freeze_record\" object";
  }
  if (const auto labels = manifest.find("labels"); labels != manifest.end()) {
    const bool strings = labels->is_array() && std::all_of(labels->begin(), labels->end(),
                                                           [](const json& label) { return label.is_string(); });
    if (!strings) return "manifest.json \"labels\" is not an array of strings";
  }
  for (const char* key : {"provenance", "options"}) {
    if (manifest.contains(key) && !manifest.at(key).is_object()) {
      return std::string("manifest.json \"") + key + "\" is not an object";
    }
  }
  return "";
}

RunDirInfo create_run_dir(const RunChoiceLock& lock, const nlohmann::json& manifest) {
  return create_run_dir(lock.runs_root(), lock.experiment_id(), manifest);
}

RunDirInfo create_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                          const nlohmann::json& manifest) {
  if (const auto problem = manifest_problem(manifest); !problem.empty()) {
    throw std::invalid_argument("refusing to create a run dir with an incomplete manifest: " + problem);
  }
  const auto parent = runs_root / experiment_id;
  if (std::filesystem::create_directories(parent)) fsync_directory(parent.parent_path());
  // The short id only has to make names unique; it is not part of any recorded result.
  const auto nonce = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
                     std::to_string(::getpid()) + manifest.dump();
  for (int attempt = 0;; ++attempt) {
    const std::string name = utc_now_compact() + "-" + sha256_hex(nonce + std::to_string(attempt)).substr(0, 6);
    const auto dir = parent / name;
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) {
      fsync_directory(parent);
      std::filesystem::create_directories(dir / "artifacts");
      write_file_atomically(dir / "manifest.json", manifest.dump(2) + "\n");  // fsyncs dir, artifacts/ included
      return {dir, manifest};
    }
    if (ec) throw std::runtime_error("cannot create run directory " + dir.string() + ": " + ec.message());
    if (attempt > 100) throw std::runtime_error("cannot find a free run directory name under " + parent.string());
  }
}

nlohmann::json read_manifest(const std::filesystem::path& run_dir) {
  const auto file = run_dir / "manifest.json";
  if (!std::filesystem::exists(file)) {
    if (holds_ledger(run_dir)) throw DamagedRunDir(run_dir, "it holds a ledger but manifest.json is missing");
    throw std::runtime_error(run_dir.string() + " has no manifest.json: it is not a k3lab run directory");
  }
  nlohmann::json manifest;
  try {
    manifest = parse_json_bounded(read_bounded_text(file, "manifest", kManifestJsonLimits), "manifest.json",
                                  kManifestJsonLimits);
  } catch (const std::exception& e) {
    throw DamagedRunDir(run_dir, e.what());
  }
  if (const auto problem = manifest_problem(manifest); !problem.empty()) throw DamagedRunDir(run_dir, problem);
  return manifest;
}

RunDirScan scan_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id) {
  RunDirScan scan;
  const auto parent = runs_root / experiment_id;
  if (!std::filesystem::is_directory(parent)) return scan;
  std::vector<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(parent)) {
    if (entry.is_directory() && entry.path().filename().string().rfind('.', 0) != 0) folders.push_back(entry.path());
  }
  std::sort(folders.begin(), folders.end());
  for (const auto& dir : folders) {
    if (!std::filesystem::exists(dir / "manifest.json") && !holds_ledger(dir)) continue;
    try {
      auto manifest = read_manifest(dir);
      if (manifest["experiment"] != experiment_id) {
        throw DamagedRunDir(dir, "manifest.json names experiment " + manifest["experiment"].dump() +
                                     " but the folder is under " + parent.string());
      }
      scan.runs.push_back({dir, std::move(manifest)});
    } catch (const DamagedRunDir& damaged) {
      scan.damaged.push_back(damaged);
    }
  }
  return scan;
}

std::vector<RunDirInfo> list_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id) {
  auto scan = scan_run_dirs(runs_root, experiment_id);
  if (!scan.damaged.empty()) throw scan.damaged.front();
  return std::move(scan.runs);
}

std::optional<RunDirInfo> latest_run_dir(const RunChoiceLock& lock, const std::string& profile) {
  return latest_run_dir(lock.runs_root(), lock.experiment_id(), profile);
}

std::optional<RunDirInfo> latest_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                                         const std::string& profile) {
  auto runs = list_run_dirs(runs_root, experiment_id);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->manifest["profile"] == profile) return *it;
  }
  return std::nullopt;
}

}  // namespace k3lab::core
