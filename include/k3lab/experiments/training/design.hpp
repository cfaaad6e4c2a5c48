#pragma once
// The design every proxy-training experiment shares: a fixed set of arms, each trained on every
// predeclared seed, seeds paired across arms (the same data order and initialisation seed).
//
// Unit ids: arm=<arm>/seed=<seed value>. Order: seed by seed, the arms in their declared order inside
// each seed, so that a stopped run leaves whole pairs.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::training {

// Throws std::invalid_argument unless the protocol declares exactly `arms` (any order).
void require_arms(const std::string& experiment_id, const std::vector<core::Arm>& declared,
                  const std::vector<std::string>& arms);

std::string arm_seed_unit_id(const std::string& arm, std::uint64_t seed);

// What a unit of one arm carries beyond {arm, seed, seed_index}.
using ArmSpec = std::function<nlohmann::json(const std::string& arm)>;
using UnitId = std::function<std::string(const std::string& arm, std::uint64_t seed)>;

// Every (arm, seed) unit in design order; spec: arm, seed, seed_index (1-based) and `spec_of(arm)`.
std::vector<Unit> arm_by_seed_units(const std::vector<std::string>& arms, const std::vector<std::uint64_t>& seeds,
                                    const ArmSpec& spec_of, const UnitId& id_of = arm_seed_unit_id);

}  // namespace k3lab::experiments::training
