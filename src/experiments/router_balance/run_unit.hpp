#pragma once
// One router-balance unit: train one (arm, seed) MoE proxy (moe_model.hpp) on the shared trainer
// (train/task_trainer.hpp) for warmup_updates + measured_updates: the data order (order seed from the
// protocol), the optimizer and learning-rate schedule (LR warmup = warmup_updates), the trainer's
// global gradient-norm clip, NaN/OOM as failure outcomes of the arm, the safety timeout, and
// checkpoints about every 2% of the run that a killed unit resumes from. One forward per update over
// the whole batch (capacity is per batch), so the unit never splits a batch into micro-batches and
// does not run data parallel.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/task_trainer.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

// What a run needs beyond the schema; the problem and its fix, or nullopt.
std::optional<std::string> runner_problem(const Parameters& p);

// Updates between checkpoints: the largest divisor of `total_updates` that is at most 2% of it (at
// least 1), so a run keeps about 50 checkpoints whatever its length.
std::int64_t checkpoint_interval_updates(std::int64_t total_updates);

// The trainer's configuration of a unit (`options`: the run's device and threads).
train::LoopConfig loop_config(const Parameters& p, const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::router_balance
