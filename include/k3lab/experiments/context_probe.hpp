#pragma once
// context-probe: useful context before the configured limit (seed experiment one, direct API).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_context_probe_experiment();

}  // namespace k3lab::experiments
