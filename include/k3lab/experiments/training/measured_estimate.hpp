#pragma once
// GPU-hours per arm from measured throughput: the plan's per-arm lines (plan_estimate.hpp,
// details["gpu_hours_by_arm"]) get hours = tokens / measured tokens per second where a `k3lab bench
// train` record (train/throughput_record.hpp) matches the arm's device and shape, else the floor;
// each line says which, and an unmeasured line carries the bench command that would measure it.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/train/throughput_record.hpp"

namespace k3lab::experiments::training {

// The records a plan may use: those in `file` whose device contains `device_kind`.
struct ThroughputSource {
  std::filesystem::path file;
  std::string device_kind;
  std::vector<train::ThroughputRecord> records;
  std::vector<std::string> warnings;  // one per malformed line, naming file and line
};

// Reads `file` (see train::read_throughput_records: a missing file is no records, never an error).
ThroughputSource load_throughput_source(const std::filesystem::path& file, const std::string& device_kind);

// Adds to every arm of details["gpu_hours_by_arm"]: gpu_hours_per_run and gpu_hours_total (measured
// when a record matches, else the floor), basis ("measured: <record key>, <date>" or "floor (...)"),
// measured {record, date, tokens_per_s} or bench_command, and evaluation_gpu_hours_per_run (the
// evaluation share of details["evaluation_cost"] at the arm's rate); and details["throughput_records"]
// = {file, device_kind, records_read, warnings}. Details without per-arm lines are left as they are.
void apply_throughput_records(nlohmann::json& details, const ThroughputSource& source);

}  // namespace k3lab::experiments::training
