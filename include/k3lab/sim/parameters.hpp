#pragma once
// The memory-pool protocol's `parameters` block as typed data: schema (every key with bounds),
// parsing with errors that name the field, and the derived pool geometries and engine settings.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/model_sizes.hpp"
#include "k3lab/sim/unified_arena.hpp"
#include "k3lab/sim/workload.hpp"

namespace k3lab::sim {

struct PolicySpec {
  std::string id;
  PolicyKind kind = PolicyKind::Unified;
  double state_to_kv_ratio = 0;  // fixed-split; 0 while tuned_ratio and no ratio is chosen yet
  bool tuned_ratio = false;      // fixed-split without a ratio: chosen by the fixed_split_tuning sweep
  CompactionMode compaction = CompactionMode::OnShortfall;  // unified
  std::uint32_t block_align_tokens = 0;   // padded-single-page
};

struct RetainedTraceSpec {
  std::string mix;
  std::string file;            // relative to the repository root, or absolute
  std::string sha256;          // of the file's bytes
  std::uint64_t generator_seed = 0;
};

// Protocol v2: the fixed split's start-up ratio is the operator's best guess for a mix's pre-shift
// traffic, chosen from `ratios` on calibration traces (first phase only, own seed stream).
struct FixedSplitTuning {
  std::vector<double> ratios;  // strictly increasing
  std::uint32_t calibration_traces_per_mix = 0;
  std::uint64_t arrivals_per_calibration_trace = 0;
};

struct SimParameters {
  std::uint64_t seed = 0;
  HybridModelConfig model;
  Bytes budget_bytes = 0;
  std::uint32_t page_tokens = 0;
  double watermark_fraction = 0;
  double decode_step_seconds = 0;
  std::uint32_t prefill_tokens_per_step = 0;
  double copy_bytes_per_second = 0;
  std::vector<PolicySpec> policies;
  std::vector<MixSpec> mixes;
  std::uint32_t seeded_traces_per_mix = 0;
  std::uint64_t arrivals_per_trace = 0;
  double drain_factor = 0;
  std::uint32_t time_series_points = 0;
  std::vector<RetainedTraceSpec> retained_traces;
  std::optional<FixedSplitTuning> fixed_split_tuning;
  std::vector<double> sensitivity_copy_bytes_per_second;  // empty: no compaction-bandwidth sensitivity

  std::size_t mix_index(const std::string& id) const;     // throws naming the known ids
  std::size_t policy_index(const std::string& id) const;
  const RetainedTraceSpec& retained_for(const std::string& mix) const;
};

const core::Schema& parameter_schema();

// Validates against parameter_schema() and the cross-field rules; throws std::invalid_argument
// listing every problem ("parameters.mixes[1].phases[0].arrival.cv: ...").
SimParameters parse_parameters(const nlohmann::json& parameters);

// Throws std::invalid_argument for a tuned fixed split whose ratio is not chosen yet (use with_ratio).
PolicyConfig policy_config(const SimParameters& params, const PolicySpec& policy);
// `policy` with its fixed-split ratio set to `ratio` (no longer tuned).
PolicySpec with_ratio(PolicySpec policy, double ratio);
EngineConfig engine_config(const SimParameters& params, bool with_time_series);
// Derived sizes for plans and result records.
nlohmann::json derived_sizes(const SimParameters& params);
nlohmann::json policy_geometry_json(const PolicyConfig& config);

// Trace 0 of a mix is its retained trace; traces 1..seeded_traces_per_mix are seeded.
std::uint64_t trace_seed(const SimParameters& params, std::size_t mix_index, std::size_t trace_index);
std::string trace_label(std::size_t trace_index);  // "retained", "seeded-01", ...
std::string seed_hex(std::uint64_t seed);          // 16 lowercase hex digits
std::string trace_source_text(const SimParameters& params, std::size_t mix_index, std::size_t trace_index);
Trace generate_protocol_trace(const SimParameters& params, std::size_t mix_index, std::size_t trace_index);

}  // namespace k3lab::sim
