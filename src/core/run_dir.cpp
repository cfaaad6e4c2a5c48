#include "k3lab/core/run_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "k3lab/core/atomic_file.hpp"
#include "k3lab/core/provenance.hpp"
#include "k3lab/core/sha256.hpp"

namespace k3lab::core {

RunDirInfo create_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                          const nlohmann::json& manifest) {
  const auto parent = runs_root / experiment_id;
  std::filesystem::create_directories(parent);
  // The short id only has to make names unique; it is not part of any recorded result.
  const auto nonce = std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) +
                     std::to_string(::getpid()) + manifest.dump();
  for (int attempt = 0;; ++attempt) {
    const std::string name = utc_now_compact() + "-" + sha256_hex(nonce + std::to_string(attempt)).substr(0, 6);
    const auto dir = parent / name;
    std::error_code ec;
    if (std::filesystem::create_directory(dir, ec)) {
      std::filesystem::create_directories(dir / "artifacts");
      write_file_atomically(dir / "manifest.json", manifest.dump(2) + "\n");
      return {dir, manifest};
    }
    if (ec) throw std::runtime_error("cannot create run directory " + dir.string() + ": " + ec.message());
    if (attempt > 100) throw std::runtime_error("cannot find a free run directory name under " + parent.string());
  }
}

nlohmann::json read_manifest(const std::filesystem::path& run_dir) {
  std::ifstream in(run_dir / "manifest.json");
  if (!in) {
    throw std::runtime_error(run_dir.string() + " has no manifest.json: it is not a k3lab run directory");
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error((run_dir / "manifest.json").string() + " is damaged (" + e.what() +
                             "); it is written once before the first unit, so restore it from a copy");
  }
}

std::vector<RunDirInfo> list_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id) {
  std::vector<RunDirInfo> runs;
  const auto parent = runs_root / experiment_id;
  if (!std::filesystem::is_directory(parent)) return runs;
  for (const auto& entry : std::filesystem::directory_iterator(parent)) {
    if (!entry.is_directory() || !std::filesystem::exists(entry.path() / "manifest.json")) continue;
    runs.push_back({entry.path(), read_manifest(entry.path())});
  }
  std::sort(runs.begin(), runs.end(), [](const RunDirInfo& a, const RunDirInfo& b) {
    return a.path.filename() < b.path.filename();
  });
  return runs;
}

std::optional<RunDirInfo> latest_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                                         const std::string& profile) {
  auto runs = list_run_dirs(runs_root, experiment_id);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->manifest.value("profile", "") == profile) return *it;
  }
  return std::nullopt;
}

}  // namespace k3lab::core
