#include "k3lab/experiments/training/measured_estimate.hpp"

#include <cctype>

#include "k3lab/train/bench.hpp"

namespace k3lab::experiments::training {
namespace {

// The bench's --opt device for a device kind: a CPU record comes from `device=cpu`, every other kind
// names a GPU.
std::string bench_device_for(const std::string& device_kind) {
  std::string kind = device_kind;
  for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return kind == "cpu" ? "cpu" : "cuda";
}

void price_arm(nlohmann::json& arm, const ThroughputSource& source, double evaluation_share) {
  const double tokens = arm.at("tokens_per_run").get<double>();
  const double runs = arm.at("runs").get<double>();
  double hours = arm.at("floor_gpu_hours_per_run").get<double>();
  if (arm.at("shape").is_null()) {
    arm["basis"] = "floor (no benchmark record can match: " + arm.value("unmeasured_reason", std::string()) + ")";
  } else {
    const auto shape = train::ThroughputShape::from_json(arm.at("shape"));
    if (const auto record = train::match_throughput_record(source.records, source.device_kind, shape)) {
      hours = tokens / record->tokens_per_s / 3600.0;
      arm["basis"] = "measured: " + record->key() + ", " + record->date;
      arm["measured"] = {{"record", record->key()}, {"date", record->date}, {"tokens_per_s", record->tokens_per_s}};
    } else {
      arm["basis"] =
          "floor (no benchmark record for this device and shape; run `k3lab bench train ...` with these "
          "settings to measure)";
      arm["bench_command"] = train::bench_train_command(shape, bench_device_for(source.device_kind), source.file);
    }
  }
  arm["gpu_hours_per_run"] = hours;
  arm["gpu_hours_total"] = hours * runs;
  arm["evaluation_gpu_hours_per_run"] = hours * evaluation_share;
}

}  // namespace

ThroughputSource load_throughput_source(const std::filesystem::path& file, const std::string& device_kind) {
  auto read = train::read_throughput_records(file);
  return {file, device_kind, std::move(read.records), std::move(read.warnings)};
}

void apply_throughput_records(nlohmann::json& details, const ThroughputSource& source) {
  if (!details.is_object() || !details.contains("gpu_hours_by_arm")) return;
  double evaluation_share = 0;
  if (details.contains("evaluation_cost"))
    evaluation_share = details["evaluation_cost"].value("share_of_training", 0.0);
  for (auto& arm : details["gpu_hours_by_arm"]) price_arm(arm, source, evaluation_share);
  details["throughput_records"] = {{"file", source.file.string()},
                                   {"device_kind", source.device_kind},
                                   {"records_read", source.records.size()},
                                   {"warnings", source.warnings}};
}

}  // namespace k3lab::experiments::training
