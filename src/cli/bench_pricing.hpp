#pragma once
// Prices a plan's per-arm GPU hours from `k3lab bench train` records, for `plan` and for the time
// limits of a Slurm submission (both must agree): a malformed record line is a warning on stderr.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace k3lab::cli {

// records_file empty: bench-records/train.jsonl beside the k3lab binary. Details without per-arm
// lines (gpu_hours_by_arm) are left as they are.
void price_arms_from_bench_records(nlohmann::json& plan_details, const std::filesystem::path& records_file,
                                   const std::string& device_kind);

// The device kind whose records count for a run's --device: "cpu" for cpu, else the GPU the plans
// assume (train/hardware_peak.hpp).
std::string bench_device_kind(const std::string& run_device);

}  // namespace k3lab::cli
