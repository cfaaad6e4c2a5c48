#pragma once
// The frozen run ledger of hybrid-attention: every (arm, seed) training run.
//
// Unit ids: arm=<arm>/seed=<seed value>. Order: seed by seed, the three arms inside each seed, so
// that the runs of one seed (paired data order and initialisation seed) finish together.
#include <string>
#include <vector>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::hybrid_attention {

// full-attention, all-kda, hybrid-3kda-1mla: the seed's three memory strategies.
const std::vector<std::string>& arm_ids();

// Throws std::invalid_argument unless the protocol's arms are exactly these three.
void require_arms(const std::vector<core::Arm>& arms);

// The mixer of every layer ("kda" or "mla") for an arm.
std::vector<std::string> layer_schedule(const std::string& arm, int n_layers);

std::string unit_id(const std::string& arm, std::uint64_t seed);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::hybrid_attention
