#pragma once
// Calibration traces of protocol v2: the traffic an operator sees before a shift, on which the fixed
// split's start-up ratio is chosen. A calibration trace of a mix uses only the mix's first phase (its
// arrival process and classes) for every arrival, and is drawn from a seed stream of its own, so it
// is never one of the retained or seeded decision traces.
#include <cstddef>
#include <cstdint>
#include <string>

#include "k3lab/sim/parameters.hpp"
#include "k3lab/sim/trace.hpp"
#include "k3lab/sim/workload.hpp"

namespace k3lab::sim {

// The coordinate that separates the calibration stream from the decision traces' {mix, trace}.
inline constexpr std::uint64_t kCalibrationStream = 0x63616c6962726174ull;  // "calibrat"

// The mix's first phase alone, taking every arrival.
MixSpec pre_shift_mix(const MixSpec& mix);

// Calibration trace k (1-based) of mix m: core::stream_seed(seed, {kCalibrationStream, m, k}).
std::uint64_t calibration_trace_seed(const SimParameters& params, std::size_t mix_index, std::size_t trace_number);
std::string calibration_trace_label(std::size_t trace_number);  // "calibration-01", ...
// Requires params.fixed_split_tuning; throws std::invalid_argument naming the fix otherwise.
Trace generate_calibration_trace(const SimParameters& params, std::size_t mix_index, std::size_t trace_number);

// Shortest decimal text that reads back as `value` ("0.05", "1.92e12"): unit ids and page labels.
std::string number_label(double value);

}  // namespace k3lab::sim
