#include "k3lab/sim/calibration.hpp"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "k3lab/core/rng.hpp"

namespace k3lab::sim {

MixSpec pre_shift_mix(const MixSpec& mix) {
  if (mix.phases.empty()) throw std::invalid_argument("mix \"" + mix.id + "\" has no phase to calibrate on");
  MixSpec out;
  out.id = mix.id;
  out.description = mix.description;
  out.phases = {mix.phases.front()};
  out.phases.front().arrival_fraction = 1.0;
  return out;
}

std::uint64_t calibration_trace_seed(const SimParameters& params, std::size_t mix_index, std::size_t trace_number) {
  return core::stream_seed(params.seed, {kCalibrationStream, static_cast<std::uint64_t>(mix_index),
                                         static_cast<std::uint64_t>(trace_number)});
}

std::string calibration_trace_label(std::size_t trace_number) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "calibration-%02zu", trace_number);
  return buffer;
}

Trace generate_calibration_trace(const SimParameters& params, std::size_t mix_index, std::size_t trace_number) {
  if (!params.fixed_split_tuning) {
    throw std::invalid_argument("calibration traces need parameters.fixed_split_tuning (protocol v2)");
  }
  const MixSpec& mix = params.mixes.at(mix_index);
  return generate_trace(
      pre_shift_mix(mix), params.fixed_split_tuning->arrivals_per_calibration_trace,
      calibration_trace_seed(params, mix_index, trace_number),
      "k3lab memory-pool workload v2 mix=" + mix.id + " phase=1 trace=" + calibration_trace_label(trace_number));
}

std::string number_label(double value) {
  char buffer[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  // printf writes "1.92e+07": drop the plus sign and the exponent's leading zeros ("1.92e7").
  std::string text = buffer;
  const auto e = text.find('e');
  if (e == std::string::npos) return text;
  std::size_t digits = e + 1;
  if (text[digits] == '+')
    text.erase(digits, 1);
  else if (text[digits] == '-')
    ++digits;
  while (digits + 1 < text.size() && text[digits] == '0') text.erase(digits, 1);
  return text;
}

}  // namespace k3lab::sim
