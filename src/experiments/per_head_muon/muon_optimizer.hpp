#pragma once
// The optimizer of each per-head-muon arm: the name it is recorded under and the factory the trainer
// builds it with (train/muon_optimizer.hpp holds Muon and Per-Head Muon themselves). The adamw arm
// runs the same instrumented optimizer with every parameter on AdamW, so its update norms are
// measured like the Muon arms'; it is recorded as "phm-adamw" to tell it from train's built-in adamw.
#include <memory>
#include <string>

#include "k3lab/train/muon_optimizer.hpp"

namespace k3lab::experiments::per_head_muon {

// The optimizer name an arm is recorded under: "phm-adamw", "muon" or "per-head-muon".
std::string optimizer_name(const std::string& arm);

// Throws std::invalid_argument for an arm that is not adamw, muon or per-head-muon.
train::MuonVariant muon_variant(const std::string& arm);

// `probe` (may be null) receives the step times and update norms of the optimizers it builds.
train::OptimizerFactory arm_optimizer_factory(const std::string& arm, std::shared_ptr<train::OptimizerProbe> probe = nullptr);

}  // namespace k3lab::experiments::per_head_muon
