#pragma once
// One hybrid-attention unit: train one (arm, seed) model to exactly the token budget with the shared
// trainer, evaluating and checkpointing every eval_interval_tokens, then measure inference memory,
// throughput and decode drift at every probe length.
#include <filesystem>
#include <string>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::experiments::hybrid_attention {

// The trainer configuration of a unit: everything but the model and init seed is identical across
// arms (data order, batch tokens, optimizer, schedule, evaluation cadence).
train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);



UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::hybrid_attention
