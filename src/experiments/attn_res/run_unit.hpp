#pragma once
// One attn-res unit: train one (arm, seed) model to exactly the token budget with the shared
// trainer, evaluating (validation loss, depth_probe.hpp) and checkpointing every
// eval_interval_tokens, with the downstream suite at its points (training/downstream.hpp); record the stored residual memory (residual_memory.hpp) and, in timing, the
// training throughput and allocator peak.
#include <filesystem>
#include <string>

#include "attn_res/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::experiments::attn_res {

// The trainer configuration of a unit: everything but the model's residual path is identical across
// arms (init seed, data order, batch tokens, optimizer, schedule, evaluation cadence).
train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);


UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::attn_res
