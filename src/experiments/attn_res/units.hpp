#pragma once
// The frozen run ledger of attn-res: every (arm, seed) training run, five seeds paired across arms.
//
// Unit ids: arm=<arm>/seed=<seed value>. Order: seed by seed, the three arms inside each seed, so a
// stopped run leaves complete pairs.
#include <string>
#include <vector>

#include "attn_res/parameters.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::attn_res {

// ordinary-residual, full-attnres, block-attnres.
const std::vector<std::string>& arm_ids();

// Throws std::invalid_argument unless the protocol's arms are exactly these three.
void require_arms(const std::vector<core::Arm>& arms);

std::string unit_id(const std::string& arm, std::uint64_t seed);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::attn_res
