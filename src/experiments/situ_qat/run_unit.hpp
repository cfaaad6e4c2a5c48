#pragma once
// One situ-qat unit: train one (arm, seed) model under the protocol's MX QAT setup to exactly the
// token budget with the shared trainer, evaluating validation loss every eval_interval_tokens and
// measuring activations (activation_probe.hpp) at every activation_histograms.interval_tokens, with
// a checkpoint at each evaluation; then the protocol's loss spikes from the per-step losses.
#include <filesystem>
#include <optional>
#include <string>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/training_unit.hpp"
#include "k3lab/train/trainer.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// What a run needs beyond the schema: implemented quantization formats, histogram checkpoints on
// evaluation points, whole-window samples. The problem and its fix, or nullopt.
std::optional<std::string> runner_problem(const Parameters& p);

// Everything but the FFN kind is identical across arms (data order, batch, optimizer, schedule,
// evaluation cadence, quantizer, init seed).
train::TrainerConfig trainer_config(const Parameters& p, const std::string& arm, std::uint64_t seed,
                                    const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);



UnitOutcome run_training_unit(const Unit& unit, RunEnv& env);

}  // namespace k3lab::experiments::situ_qat
