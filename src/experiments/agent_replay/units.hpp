#pragma once
// The frozen run ledger of agent-replay: every (task, arm, repetition) agent run.
//
// Unit ids: task=<t>/arm=<arm>/rep=<r>, t and r from 1. Order: repetition, then task in the frozen
// task order, then arm (control first), so that every arm meets each task at about the same time of
// the window and a stopped window leaves whole task-by-arm comparisons.
#include <string>
#include <vector>

#include "agent_replay/parameters.hpp"
#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::agent_replay {

// The seed's control and six single-fault arms, in its order.
const std::vector<std::string>& arm_ids();

// Throws std::invalid_argument unless the protocol's arms are exactly these seven.
void require_arms(const std::vector<core::Arm>& arms);

std::string unit_id(int task, const std::string& arm, int rep);

// What the arm changes relative to the documented protocol (null for the control).
nlohmann::json fault_spec(const Parameters& p, const std::string& arm);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::agent_replay
