#pragma once
// router-balance: Quantile Balancing versus other router controls (seed experiment five, proxy ablation).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_router_balance_experiment();

}  // namespace k3lab::experiments
