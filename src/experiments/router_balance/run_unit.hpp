#pragma once
// One router-balance unit: train one (arm, seed) MoE model (moe_model.hpp) for warmup_updates +
// measured_updates in a dedicated loop. Not train::train: its model is models::DecoderLM, which has no
// routed feed-forward, and the bias controls need the routing of every forward. The loop keeps the
// shared trainer's pieces: the data order (train/data_order.hpp, order seed from the protocol), the
// optimizer and learning-rate schedule (train/optimizer.hpp, LR warmup = warmup_updates), the global
// gradient-norm clip 1.0, and NaN/OOM as failure outcomes of the arm. One forward per update over the
// whole batch (capacity is per batch). No checkpoints: a killed unit restarts from update 0.
#include <optional>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training_unit.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

// What a run needs beyond the schema; the problem and its fix, or nullopt.
std::optional<std::string> runner_problem(const Parameters& p);


UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::router_balance
