#include "memory_pool/units.hpp"

#include <stdexcept>

#include "k3lab/sim/calibration.hpp"

namespace k3lab::experiments::memory_pool {
namespace {

void add_calibration_units(const sim::SimParameters& params, const sim::PolicySpec& fixed, std::vector<Unit>& units) {
  const auto& tuning = *params.fixed_split_tuning;
  for (std::size_t m = 0; m < params.mixes.size(); ++m) {
    for (std::size_t k = 1; k <= tuning.calibration_traces_per_mix; ++k) {
      for (double ratio : tuning.ratios) {
        units.push_back({calibration_unit_id(params.mixes[m].id, k, ratio),
                         {{"stage", kStageCalibration},
                          {"mix", params.mixes[m].id},
                          {"mix_index", m},
                          {"trace", sim::calibration_trace_label(k)},
                          {"trace_number", k},
                          {"trace_seed", sim::seed_hex(sim::calibration_trace_seed(params, m, k))},
                          {"policy", fixed.id},
                          {"policy_kind", sim::policy_kind_name(fixed.kind)},
                          {"state_to_kv_ratio", ratio},
                          {"arrivals", tuning.arrivals_per_calibration_trace}}});
      }
    }
  }
}

void add_decision_units(const sim::SimParameters& params, std::vector<Unit>& units) {
  for (std::size_t m = 0; m < params.mixes.size(); ++m) {
    for (std::size_t t = 0; t <= params.seeded_traces_per_mix; ++t) {
      for (const auto& policy : params.policies) {
        const std::string trace = sim::trace_label(t);
        units.push_back({unit_id(params.mixes[m].id, trace, policy.id),
                         {{"mix", params.mixes[m].id},
                          {"mix_index", m},
                          {"trace", trace},
                          {"trace_index", t},
                          {"trace_seed", sim::seed_hex(sim::trace_seed(params, m, t))},
                          {"policy", policy.id},
                          {"policy_kind", sim::policy_kind_name(policy.kind)},
                          {"arrivals", params.arrivals_per_trace}}});
      }
    }
  }
}

// The retained-trace unit of a sensitivity stage; the caller adds the varied setting.
Unit sensitivity_unit(const sim::SimParameters& params, std::size_t m, const sim::PolicySpec& policy,
                      const std::string& stage, std::string id) {
  return {std::move(id),
          {{"stage", stage},
           {"mix", params.mixes[m].id},
           {"mix_index", m},
           {"trace", sim::trace_label(0)},
           {"trace_index", 0},
           {"trace_seed", sim::seed_hex(sim::trace_seed(params, m, 0))},
           {"policy", policy.id},
           {"policy_kind", sim::policy_kind_name(policy.kind)},
           {"arrivals", params.arrivals_per_trace}}};
}

void add_sensitivity_units(const sim::SimParameters& params, std::vector<Unit>& units) {
  const sim::PolicySpec* fixed = first_policy_of(params, sim::PolicyKind::FixedSplit);
  const sim::PolicySpec* unified = first_policy_of(params, sim::PolicyKind::Unified);
  for (std::size_t m = 0; m < params.mixes.size(); ++m) {
    const std::string& mix = params.mixes[m].id;
    if (params.fixed_split_tuning && fixed) {
      for (double ratio : params.fixed_split_tuning->ratios) {
        Unit u = sensitivity_unit(params, m, *fixed, kStageRatioSensitivity, ratio_sensitivity_unit_id(mix, ratio));
        u.spec["state_to_kv_ratio"] = ratio;
        units.push_back(std::move(u));
      }
    }
    if (unified) {
      for (double bandwidth : params.sensitivity_copy_bytes_per_second) {
        Unit u = sensitivity_unit(params, m, *unified, kStageCompactionSensitivity,
                                  compaction_sensitivity_unit_id(mix, bandwidth));
        u.spec["copy_bytes_per_second"] = bandwidth;
        units.push_back(std::move(u));
      }
    }
  }
}

}  // namespace

std::string unit_id(const std::string& mix, const std::string& trace, const std::string& policy) {
  return "mix=" + mix + "/trace=" + trace + "/policy=" + policy;
}

std::string calibration_unit_id(const std::string& mix, std::size_t trace_number, double ratio) {
  return std::string("stage=") + kStageCalibration + "/mix=" + mix +
         "/trace=" + sim::calibration_trace_label(trace_number) + "/ratio=" + sim::number_label(ratio);
}

std::string ratio_sensitivity_unit_id(const std::string& mix, double ratio) {
  return std::string("stage=") + kStageRatioSensitivity + "/mix=" + mix + "/ratio=" + sim::number_label(ratio);
}

std::string compaction_sensitivity_unit_id(const std::string& mix, double copy_bytes_per_second) {
  return std::string("stage=") + kStageCompactionSensitivity + "/mix=" + mix +
         "/copy=" + sim::number_label(copy_bytes_per_second);
}

std::string stage_of(const nlohmann::json& spec) {
  return spec.is_object() && spec.contains("stage") ? spec.at("stage").get<std::string>() : kStageDecision;
}

const sim::PolicySpec* first_policy_of(const sim::SimParameters& params, sim::PolicyKind kind) {
  for (const auto& policy : params.policies) {
    if (policy.kind == kind) return &policy;
  }
  return nullptr;
}

void require_arms_match_policies(const std::vector<core::Arm>& arms, const sim::SimParameters& params) {
  auto list = [](const auto& items, auto name) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + name(item);
    return out;
  };
  bool same = arms.size() == params.policies.size();
  for (std::size_t i = 0; same && i < arms.size(); ++i) same = arms[i].id == params.policies[i].id;
  if (!same) {
    throw std::invalid_argument("memory-pool: arms [" + list(arms, [](const core::Arm& a) { return a.id; }) +
                                "] must match parameters.policies [" +
                                list(params.policies, [](const sim::PolicySpec& p) { return p.id; }) +
                                "] one to one, in order");
  }
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const bool reference_kind = params.policies[i].kind == sim::PolicyKind::PaddedSinglePage;
    if (arms[i].requested_by_seed == reference_kind) {
      throw std::invalid_argument("memory-pool: arm \"" + arms[i].id + "\" has requested_by_seed " +
                                  (arms[i].requested_by_seed ? "true" : "false") +
                                  " but the seed asks for fixed pools and unified allocation only; the padded "
                                  "single-page pool is k3lab's reference arm (requested_by_seed false)");
    }
  }
}

std::vector<Unit> enumerate_units(const sim::SimParameters& params) {
  std::vector<Unit> units;
  const sim::PolicySpec* fixed = first_policy_of(params, sim::PolicyKind::FixedSplit);
  if (params.fixed_split_tuning && fixed) add_calibration_units(params, *fixed, units);
  add_decision_units(params, units);
  add_sensitivity_units(params, units);
  return units;
}

}  // namespace k3lab::experiments::memory_pool
