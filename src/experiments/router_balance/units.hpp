#pragma once
// The frozen run ledger of router-balance: every (arm, seed) run, five seeds paired across four arms.
//
// Unit ids: arm=<arm>/seed=<seed value>. Order: seed by seed, the four arms inside each seed.
#include <string>
#include <vector>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

// no-control, aux-loss, fixed-step-bias, quantile-balancing.
const std::vector<std::string>& arm_ids();

// Throws std::invalid_argument unless the protocol's arms are exactly these four.
void require_arms(const std::vector<core::Arm>& arms);

std::string unit_id(const std::string& arm, std::uint64_t seed);

// The balancing control of an arm and its settings.
nlohmann::json control_spec(const Parameters& p, const std::string& arm);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::router_balance
