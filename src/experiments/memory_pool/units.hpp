#pragma once
// The frozen ledger of memory-pool, in execution order, derived only from parameters:
//   1. calibration units (protocol v2, when parameters.fixed_split_tuning is set): per mix, per
//      calibration trace, the fixed split at every candidate ratio ("stage=calibration/...");
//   2. decision units, one per (mix, trace, policy): mixes in protocol order, the retained trace first,
//      then seeded-01..N, policies innermost (so one trace serves its policies back to back). Their ids
//      and specs are those of protocol v1 (no "stage" key);
//   3. per mix, on its retained trace: the fixed split at every candidate ratio
//      ("stage=ratio-sensitivity/...", with tuning), then the unified arm at every sensitivity copy
//      bandwidth ("stage=compaction-sensitivity/...", with parameters.sensitivity). The two stages are
//      interleaved by mix so that each retained trace is loaded once for both.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/sim/parameters.hpp"

namespace k3lab::experiments::memory_pool {

inline constexpr const char* kStageCalibration = "calibration";
inline constexpr const char* kStageDecision = "decision";
inline constexpr const char* kStageRatioSensitivity = "ratio-sensitivity";
inline constexpr const char* kStageCompactionSensitivity = "compaction-sensitivity";

std::string unit_id(const std::string& mix, const std::string& trace, const std::string& policy);
std::string calibration_unit_id(const std::string& mix, std::size_t trace_number, double ratio);
std::string ratio_sensitivity_unit_id(const std::string& mix, double ratio);
std::string compaction_sensitivity_unit_id(const std::string& mix, double copy_bytes_per_second);

// A unit spec's stage: its "stage" key, or "decision" for the v1-shaped decision units.
std::string stage_of(const nlohmann::json& spec);

// The first policy of `kind`, or nullptr.
const sim::PolicySpec* first_policy_of(const sim::SimParameters& params, sim::PolicyKind kind);

// Arms and policies must agree one to one, in the same order, and padded-single-page is the only
// kind that is not the seed's; throws std::invalid_argument saying what to fix.
void require_arms_match_policies(const std::vector<core::Arm>& arms, const sim::SimParameters& params);

std::vector<Unit> enumerate_units(const sim::SimParameters& params);

}  // namespace k3lab::experiments::memory_pool
