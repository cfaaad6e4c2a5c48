#pragma once
// What every proxy-training experiment (hybrid-attention, attn-res, router-balance, situ-qat,
// per-head-muon) does the same way around its own training: the dataset check before a run, the
// trainer settings every unit shares, the hooks that report to the run, the window rule for a dataset
// that vanished mid-run, and how a trainer result becomes a unit outcome.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/experiments/experiment.hpp"
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/train/dataset.hpp"
#include "k3lab/train/trainer.hpp"

namespace k3lab::experiments {

// Failure reason of a unit whose dataset could not be loaded.
inline constexpr const char* kDataUnavailable = "data-unavailable";

// The reason the dataset cannot be loaded (with its fix), or nullopt: for Experiment::preflight.
std::optional<std::string> dataset_problem(const train::DatasetRequest& request);

// Where a unit keeps its checkpoints: <artifacts>/checkpoints/<unit id with '/' as '_'>; empty (no
// checkpoints) without an artifacts dir, so nothing ever lands in the working directory.
std::filesystem::path unit_checkpoint_dir(const std::filesystem::path& artifacts_dir, const std::string& unit_id);

// The execution options of `k3lab run` that reach the trainer (device, threads): how to run, never
// what is trained (the micro-batch is the protocol's micro_batch_rows, the same for every arm).
void apply_execution_options(train::TrainerConfig& config, const nlohmann::json& options);

// A stop verdict when `terminal_record` is a `data-unavailable` failure (every later unit would fail alike).
std::optional<WindowVerdict> data_unavailable_stop(const nlohmann::json& terminal_record);

// Completed: a result with `data` and `timing`. Failed: a failure of the arm with the trainer's
// class (NaN, non-finite gradient, OOM), except a dead data-parallel rank, thrown as RankFailure so
// the runner notes it and leaves the unit open. TimedOut: invalid (the safety timeout). Interrupted:
// thrown, so the runner sees its stop flag and leaves the unit open for the checkpoint to resume.
UnitOutcome training_outcome(const train::TrainResult& result, std::string_view experiment_id, const Unit& unit,
                             nlohmann::json data, nlohmann::json timing);

namespace training {

// The dataset of a run (data root from --data-dir, $K3LAB_DATA_DIR or ./data).
train::DatasetRequest dataset_request(const DataSource& data, std::int64_t vocab_size, const nlohmann::json& options);

// The trainer settings every arm of a proxy experiment shares: data order, token schedule, init seed
// (the same in every arm, so parameters the arms share start equal), checkpoints, execution options.
// The module adds the model, the optimizer and anything of its own.
train::TrainerConfig shared_trainer_config(const DataSource& data, const TokenSchedule& schedule, std::uint64_t seed,
                                           const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);

// One arm's trainer settings: the shared ones, the arm's model and the protocol's optimizer block.
train::TrainerConfig arm_trainer_config(const DataSource& data, const TokenSchedule& schedule,
                                        const OptimizerBlock& optimizer, models::ModelConfig model, std::uint64_t seed,
                                        const nlohmann::json& options, const std::filesystem::path& checkpoint_dir);

// Loads the unit's dataset and records its provenance in data["dataset"]; the data-unavailable
// failure (carrying `data`) when it cannot be loaded.
std::optional<UnitOutcome> load_unit_dataset(const train::DatasetRequest& request, train::Dataset& dataset,
                                             nlohmann::json& data);

// Hooks that report to the run: each evaluation as a ledger note, progress, the stop flag. The module
// adds its evaluation probes.
train::TrainerHooks unit_hooks(const Unit& unit, RunEnv& env);

// Where the unit trained: the data-parallel group's device, else the configured one.
torch::Device unit_device(const RunEnv& env, const train::TrainerConfig& config);

}  // namespace training
}  // namespace k3lab::experiments
