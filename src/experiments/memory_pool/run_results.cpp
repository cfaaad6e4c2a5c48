#include "memory_pool/run_results.hpp"

#include "memory_pool/units.hpp"

namespace k3lab::experiments::memory_pool {

const nlohmann::json* RunResults::retained(const std::string& mix, const std::string& policy) const {
  const auto it = decision.find({mix, policy});
  if (it == decision.end()) return nullptr;
  for (const auto& r : it->second) {
    if (r.trace_index == 0) return &r.data;
  }
  return nullptr;
}

RunResults collect_results(const core::LedgerRecords& terminal_records) {
  RunResults out;
  for (const auto& record : terminal_records) {
    if (record.value("kind", "") != "result" || !record.contains("spec")) continue;
    const nlohmann::json& spec = record["spec"];
    const std::string stage = stage_of(spec);
    const std::string mix = spec.value("mix", "");
    nlohmann::json data = record.value("data", nlohmann::json::object());
    if (stage == kStageDecision) {
      out.decision[{mix, spec.value("policy", "")}].push_back(
          {spec.value("trace_index", std::size_t{0}), std::move(data)});
    } else if (stage == kStageCalibration) {
      out.calibration[record.value("unit", "")] = std::move(data);
    } else if (stage == kStageRatioSensitivity) {
      out.ratio_sensitivity[mix].emplace_back(spec.value("state_to_kv_ratio", 0.0), std::move(data));
    } else if (stage == kStageCompactionSensitivity) {
      out.compaction_sensitivity[mix].emplace_back(spec.value("copy_bytes_per_second", 0.0), std::move(data));
    }
  }
  return out;
}

double data_number(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : 0.0; }

}  // namespace k3lab::experiments::memory_pool
