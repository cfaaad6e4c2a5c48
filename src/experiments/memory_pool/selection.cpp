#include "memory_pool/selection.hpp"

#include <stdexcept>

#include "memory_pool/units.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

double number_at(const nlohmann::json& data, const char* group, const char* key) {
  if (!data.contains(group) || !data.at(group).contains(key) || !data.at(group).at(key).is_number()) {
    throw std::invalid_argument(std::string("calibration result without ") + group + "." + key);
  }
  return data.at(group).at(key).get<double>();
}

// True when `a` beats `b` under the rule (both complete).
bool better(const CalibrationRow& a, const CalibrationRow& b) {
  if (a.admitted_sum != b.admitted_sum) return a.admitted_sum > b.admitted_sum;
  if (a.queue_delay_mean_seconds != b.queue_delay_mean_seconds) {
    return a.queue_delay_mean_seconds < b.queue_delay_mean_seconds;
  }
  return a.ratio < b.ratio;
}

}  // namespace

nlohmann::json SplitChoice::to_json() const {
  nlohmann::json table = nlohmann::json::array();
  for (const auto& row : rows) {
    table.push_back({{"state_to_kv_ratio", row.ratio},
                     {"admitted_by_last_arrival", row.admitted_by_last_arrival},
                     {"admitted_by_last_arrival_sum", row.admitted_sum},
                     {"mean_queue_delay_seconds", row.mean_queue_delay_seconds},
                     {"queue_delay_mean_seconds", row.queue_delay_mean_seconds}});
  }
  nlohmann::json out = {{"rule",
                         "fixed-split-tuning: highest admitted-by-last-arrival summed over the mix's "
                         "pre-shift calibration traces; ties: lower mean queue delay, then smaller ratio"},
                        {"mix", mix},
                        {"chosen", chosen},
                        {"calibration", table}};
  if (chosen) out["state_to_kv_ratio"] = ratio;
  if (!missing.empty()) out["missing"] = missing;
  return out;
}

std::map<std::string, nlohmann::json> calibration_results(const core::LedgerRecords& terminal_records) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& record : terminal_records) {
    if (record.value("kind", "") != "result" || !record.contains("spec")) continue;
    if (stage_of(record.at("spec")) != kStageCalibration) continue;
    out[record.value("unit", "")] = record.value("data", nlohmann::json::object());
  }
  return out;
}

SplitChoice choose_split_ratio(const sim::SimParameters& params, const std::string& mix,
                               const std::map<std::string, nlohmann::json>& results) {
  if (!params.fixed_split_tuning) throw std::invalid_argument("choose_split_ratio needs parameters.fixed_split_tuning");
  const auto& tuning = *params.fixed_split_tuning;
  SplitChoice choice;
  choice.mix = mix;
  for (double ratio : tuning.ratios) {
    CalibrationRow row;
    row.ratio = ratio;
    row.complete = true;
    for (std::size_t k = 1; k <= tuning.calibration_traces_per_mix; ++k) {
      const std::string id = calibration_unit_id(mix, k, ratio);
      const auto it = results.find(id);
      if (it == results.end()) {
        choice.missing.push_back(id);
        row.complete = false;
        continue;
      }
      row.admitted_by_last_arrival.push_back(number_at(it->second, "counts", "admitted_by_last_arrival"));
      row.mean_queue_delay_seconds.push_back(number_at(it->second, "queue_delay_seconds", "mean"));
    }
    for (double v : row.admitted_by_last_arrival) row.admitted_sum += v;
    for (double v : row.mean_queue_delay_seconds) row.queue_delay_mean_seconds += v;
    if (!row.mean_queue_delay_seconds.empty()) {
      row.queue_delay_mean_seconds /= static_cast<double>(row.mean_queue_delay_seconds.size());
    }
    choice.rows.push_back(std::move(row));
  }
  if (!choice.missing.empty()) return choice;
  const CalibrationRow* best = &choice.rows.front();
  for (const auto& row : choice.rows) {
    if (better(row, *best)) best = &row;
  }
  choice.chosen = true;
  choice.ratio = best->ratio;
  return choice;
}

}  // namespace k3lab::experiments::memory_pool
