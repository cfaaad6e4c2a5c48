#pragma once
// memory-pool: dual KDA/MLA memory-pool admission (seed experiment eight, systems simulation).
// The simulator is k3lab_sim; `k3lab bench memory-pool` calls k3lab::sim::run_memory_pool_bench
// (include/k3lab/sim/bench.hpp).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_memory_pool_experiment();

}  // namespace k3lab::experiments
