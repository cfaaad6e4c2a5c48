#pragma once
// Facts about where a run came from: source revision, build, machine, time, command line.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace k3lab::core {

struct SourceRevision {
  std::string revision = "unknown";  // git commit of the tree holding the protocols; "unknown" outside git
  bool dirty = false;                // uncommitted changes present
};

// `not_code`, when given, is a folder inside the tree whose changes do not make it dirty: the freeze
// records, which freezing writes (freezing several protocols would otherwise see its own first record).
SourceRevision source_revision(const std::filesystem::path& inside_tree, const std::filesystem::path& not_code = {});

// UTC timestamps: ISO 8601 with milliseconds for records ("2026-08-03T12:34:56.789Z"), to the second for
// messages and throughput records ("2026-08-03T12:34:56Z"), compact for run dir names.
std::string format_utc(std::chrono::system_clock::time_point time);
std::string format_utc_seconds(std::chrono::system_clock::time_point time);
std::string utc_now_iso();
std::string utc_now_compact();  // YYYYMMDD-HHMMSS

std::string host_name();
std::string cpu_model();

// Everything above plus the build's facts, for manifest.json.
nlohmann::json provenance(const std::filesystem::path& inside_tree, const std::vector<std::string>& argv);

}  // namespace k3lab::core
