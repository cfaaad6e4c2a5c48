#pragma once
// Run directories: runs/<id>/<YYYYMMDD-HHMMSS>-<shortid>/ with manifest.json, ledger.jsonl, artifacts/.
// A run dir whose manifest is missing, unreadable or incomplete while it holds a ledger is damaged:
// listing refuses it (DamagedRunDir) instead of skipping it, because a skipped run dir is silently
// orphaned by the next run. Folders whose name starts with '.' are not run dirs (a place to set one aside).
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/run_choice_lock.hpp"

namespace k3lab::core {

struct RunDirInfo {
  std::filesystem::path path;
  nlohmann::json manifest;
};

class DamagedRunDir : public std::runtime_error {
 public:
  // The message names the folder, the problem, and what to do (restore the manifest, or set the
  // folder aside and run again).
  DamagedRunDir(const std::filesystem::path& run_dir, const std::string& problem);
  const std::filesystem::path& run_dir() const { return run_dir_; }
  const std::string& problem() const { return problem_; }

 private:
  std::filesystem::path run_dir_;
  std::string problem_;
};

// Why `manifest` is not a complete run manifest ("" when it is): the fields every reader relies on.
std::string manifest_problem(const nlohmann::json& manifest);

// Creates a new run directory and writes its manifest (before any unit runs); the new folder entry and
// the manifest are fsync'ed. Throws std::invalid_argument for an incomplete manifest. Choosing and
// creating happen under a RunChoiceLock in the runner; the first form exists for callers that hold it
// already or that cannot race (tests, tools).
RunDirInfo create_run_dir(const RunChoiceLock& lock, const nlohmann::json& manifest);
RunDirInfo create_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                          const nlohmann::json& manifest);

// The manifest of a run dir. Throws DamagedRunDir when it is unreadable or incomplete, or missing
// while the folder holds a ledger; std::runtime_error when the folder is no run dir at all.
nlohmann::json read_manifest(const std::filesystem::path& run_dir);

struct RunDirScan {
  std::vector<RunDirInfo> runs;        // usable run dirs, oldest first (by name: it starts with the UTC time)
  std::vector<DamagedRunDir> damaged;  // in name order
};

// Every run directory of an experiment under runs_root, sorted, without stopping at a damaged one
// (`report` shows those beside the others). A folder with neither manifest nor ledger is skipped: its
// creation was interrupted before anything was recorded in it.
RunDirScan scan_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id);

// Every usable run directory of an experiment, oldest first; throws the first DamagedRunDir.
std::vector<RunDirInfo> list_run_dirs(const std::filesystem::path& runs_root, const std::string& experiment_id);

// The newest run of the experiment whose manifest has this profile; throws DamagedRunDir when any run
// dir of the experiment is damaged (it might be the newest).
std::optional<RunDirInfo> latest_run_dir(const RunChoiceLock& lock, const std::string& profile);
std::optional<RunDirInfo> latest_run_dir(const std::filesystem::path& runs_root, const std::string& experiment_id,
                                         const std::string& profile);

}  // namespace k3lab::core
