#pragma once
// The frozen ledger of memory-pool: one unit per (mix, trace, policy), mixes in protocol order,
// the retained trace first, then seeded-01..N, policies innermost (so one trace serves its three
// policies back to back).
#include <string>
#include <vector>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/sim/parameters.hpp"

namespace k3lab::experiments::memory_pool {

std::string unit_id(const std::string& mix, const std::string& trace, const std::string& policy);

// Arms and policies must agree one to one, in the same order, and padded-single-page is the only
// kind that is not the seed's; throws std::invalid_argument saying what to fix.
void require_arms_match_policies(const std::vector<core::Arm>& arms, const sim::SimParameters& params);

std::vector<Unit> enumerate_units(const sim::SimParameters& params);

}  // namespace k3lab::experiments::memory_pool
