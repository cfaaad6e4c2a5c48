#include "cli/bench_pricing.hpp"

#include <iostream>

#include "k3lab/experiments/training/measured_estimate.hpp"
#include "k3lab/train/hardware_peak.hpp"
#include "k3lab/train/throughput_record.hpp"

namespace k3lab::cli {

void price_arms_from_bench_records(nlohmann::json& plan_details, const std::filesystem::path& records_file,
                                   const std::string& device_kind) {
  if (!plan_details.is_object() || !plan_details.contains("gpu_hours_by_arm")) return;
  const auto file = records_file.empty() ? train::default_throughput_records_path() : records_file;
  const auto source = experiments::training::load_throughput_source(file, device_kind);
  for (const auto& warning : source.warnings) std::cerr << "warning: " << warning << "\n";
  experiments::training::apply_throughput_records(plan_details, source);
}

std::string bench_device_kind(const std::string& run_device) {
  return run_device == "cpu" ? "cpu" : train::kH200Bf16Matmul.device;
}

}  // namespace k3lab::cli
