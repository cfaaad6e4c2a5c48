#pragma once
// One per-head-muon unit: train the shared proxy (parameters.model, full causal attention, SwiGLU,
// tied embeddings) with the arm's optimizer to exactly the unit's token budget (pilot or
// confirmatory), evaluating validation loss, update-norm dispersion and head diversity every
// eval_interval_tokens. A confirmatory unit first reads the pilot results from the run's ledger and
// refuses to start unless every pilot of its arm has a terminal record.
#include <filesystem>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/trainer.hpp"
#include "per_head_muon/parameters.hpp"

namespace k3lab::experiments::per_head_muon {

models::ModelConfig proxy_model_config(const Parameters& p);

// Identical for every arm except the optimizer name and its (learning rate, weight decay).
train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, const Configuration& configuration,
                                    std::uint64_t seed, std::int64_t token_budget, const nlohmann::json& options,
                                    const std::filesystem::path& checkpoint_dir);

// The invalid reason of a confirmatory unit started before its arm's pilots ended.
inline constexpr const char* kPilotsUnfinished = "pilots-unfinished";

UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::per_head_muon
