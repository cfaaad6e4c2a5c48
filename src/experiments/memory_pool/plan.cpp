#include "memory_pool/plan.hpp"

#include "memory_pool/units.hpp"

namespace k3lab::experiments::memory_pool {

namespace {
// Measured by `k3lab bench memory-pool` on the development machine (docs/memory-pool.md): a
// conservative round figure, for the estimate only.
constexpr double kArrivalsPerCpuSecond = 1.0e6;
constexpr double kTraceArrivalsPerCpuSecond = 2.0e6;
}  // namespace

nlohmann::json plan_details(const sim::SimParameters& params, const std::vector<Unit>& units) {
  nlohmann::json mixes = nlohmann::json::array();
  for (std::size_t m = 0; m < params.mixes.size(); ++m) {
    const auto& mix = params.mixes[m];
    nlohmann::json phases = nlohmann::json::array();
    const auto counts = sim::phase_counts(mix, params.arrivals_per_trace);
    double duration = 0;
    for (std::size_t p = 0; p < mix.phases.size(); ++p) {
      duration += static_cast<double>(counts[p]) / mix.phases[p].arrival.rate_per_second;
      phases.push_back({{"arrivals", counts[p]}, {"rate_per_second", mix.phases[p].arrival.rate_per_second}});
    }
    const auto& retained = params.retained_for(mix.id);
    mixes.push_back({{"id", mix.id},
                     {"phases", phases},
                     {"expected_trace_seconds", duration},
                     {"retained_trace", {{"file", retained.file}, {"sha256", retained.sha256}, {"generator_seed", sim::seed_hex(retained.generator_seed)}}},
                     {"traces", 1 + params.seeded_traces_per_mix}});
  }
  double arrivals = 0;
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& unit : units) {
    arrivals += unit.spec.value("arrivals", 0.0);
    const std::string stage = stage_of(unit.spec);
    stages[stage] = stages.value(stage, 0) + 1;
  }
  double traces = static_cast<double>(params.mixes.size() * (1 + params.seeded_traces_per_mix)) *
                  static_cast<double>(params.arrivals_per_trace);
  if (params.fixed_split_tuning) {
    traces += static_cast<double>(params.mixes.size() * params.fixed_split_tuning->calibration_traces_per_mix) *
              static_cast<double>(params.fixed_split_tuning->arrivals_per_calibration_trace);
  }
  return {{"units", units.size()},
          {"units_by_stage", stages},
          {"mixes", params.mixes.size()},
          {"traces_per_mix", 1 + params.seeded_traces_per_mix},
          {"policies", params.policies.size()},
          {"arrivals_per_trace", params.arrivals_per_trace},
          {"arrivals_simulated", arrivals},
          {"estimated_cpu_seconds", arrivals / kArrivalsPerCpuSecond + traces / kTraceArrivalsPerCpuSecond},
          {"sizes", sim::derived_sizes(params)},
          {"mix_plan", mixes}};
}

}  // namespace k3lab::experiments::memory_pool
