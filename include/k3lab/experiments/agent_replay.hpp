#pragma once
// agent-replay: exact message replay and agent reliability (seed experiment two, direct API).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_agent_replay_experiment();

}  // namespace k3lab::experiments
