#pragma once
// Protocol v2's start-up guess for the fixed split: per mix, the candidate ratio that does best on the
// mix's pre-shift calibration traces. Best = the highest admitted-by-last-arrival count summed over the
// calibration traces; ties go to the lower mean queue delay (the mean over the calibration traces of
// each trace's mean queue delay), then to the smaller ratio. The choice is made only when every
// calibration unit of the mix has a result.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/ledger_records.hpp"
#include "k3lab/sim/parameters.hpp"

namespace k3lab::experiments::memory_pool {

struct CalibrationRow {
  double ratio = 0;
  std::vector<double> admitted_by_last_arrival;  // per calibration trace, in trace order
  std::vector<double> mean_queue_delay_seconds;
  double admitted_sum = 0;
  double queue_delay_mean_seconds = 0;  // mean of the per-trace means
  bool complete = false;                // every calibration trace has a result at this ratio
};

struct SplitChoice {
  std::string mix;
  bool chosen = false;
  double ratio = 0;
  std::vector<CalibrationRow> rows;  // in candidate order
  std::vector<std::string> missing;  // calibration unit ids without a result record

  nlohmann::json to_json() const;  // the "chosen_by" record of a fixed-split decision unit
};

// The data of every calibration result record, by unit id (other stages and kinds are skipped).
std::map<std::string, nlohmann::json> calibration_results(const core::LedgerRecords& terminal_records);

// The predeclared rule over `results` (unit id -> result data) for `mix`. Requires params.fixed_split_tuning.
SplitChoice choose_split_ratio(const sim::SimParameters& params, const std::string& mix,
                               const std::map<std::string, nlohmann::json>& results);

}  // namespace k3lab::experiments::memory_pool
