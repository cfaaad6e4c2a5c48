#pragma once
// per-head-muon: Per-Head Muon versus standard Muon and AdamW (seed experiment seven, proxy ablation).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_per_head_muon_experiment();

}  // namespace k3lab::experiments
