#pragma once
// Run directories: runs/<id>/<YYYYMMDD-HHMMSS>-<shortid>/ with manifest.json, ledger.jsonl, artifacts/.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct RunDirInfo {
  std::filesystem::path path;
  nlohmann::json manifest;
};

// Creates a new run directory and writes its manifest (before any unit runs).
RunDirInfo create_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                          const nlohmann::json& manifest);

nlohmann::json read_manifest(const std::filesystem::path& run_dir);

// Every run directory of an experiment under runs_root, oldest first (by name, which starts with the
// UTC start time).
std::vector<RunDirInfo> list_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id);

// The newest run of `experiment_id` whose manifest has this profile.
std::optional<RunDirInfo> latest_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                                         const std::string& profile);

}  // namespace k3lab::core
