#include "memory_pool/units.hpp"

#include <stdexcept>

namespace k3lab::experiments::memory_pool {

std::string unit_id(const std::string& mix, const std::string& trace, const std::string& policy) {
  return "mix=" + mix + "/trace=" + trace + "/policy=" + policy;
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
  return units;
}

}  // namespace k3lab::experiments::memory_pool
