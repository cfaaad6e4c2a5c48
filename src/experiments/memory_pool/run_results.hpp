#pragma once
// The result records of one memory-pool run, sorted by stage for the page (failed and invalid units
// are listed by the caller in the failure log and the excluded-data section).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger_records.hpp"

namespace k3lab::experiments::memory_pool {

struct UnitResult {
  std::size_t trace_index = 0;
  nlohmann::json data;
};

// A sensitivity unit's setting (ratio or copy bandwidth) and its data, in ledger (plan) order.
using SettingResults = std::vector<std::pair<double, nlohmann::json>>;

struct RunResults {
  std::map<std::pair<std::string, std::string>, std::vector<UnitResult>> decision;  // (mix, policy)
  std::map<std::string, nlohmann::json> calibration;                                // unit id -> data
  std::map<std::string, SettingResults> ratio_sensitivity;                          // mix -> (ratio, data)
  std::map<std::string, SettingResults> compaction_sensitivity;                     // mix -> (bytes/s, data)

  // The retained-trace decision data of (mix, policy), or nullptr.
  const nlohmann::json* retained(const std::string& mix, const std::string& policy) const;
};

RunResults collect_results(const core::LedgerRecords& terminal_records);

// A number in a unit's data (0 when absent or not a number: the page shows what the ledger holds).
double data_number(const nlohmann::json& value);

}  // namespace k3lab::experiments::memory_pool
