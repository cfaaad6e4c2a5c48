#pragma once
// What every proxy-training experiment (hybrid-attention, attn-res, router-balance, situ-qat,
// per-head-muon) does the same way around its own training: the dataset check before a run, the
// window rule for a dataset that vanished mid-run, and how a trainer result becomes a unit outcome.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
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

// The execution options of `k3lab run` that reach the trainer (device, threads, micro_batch_rows):
// how to run, never what is trained.
void apply_execution_options(train::TrainerConfig& config, const nlohmann::json& options);

// A stop verdict at the first `data-unavailable` failure (every later unit would fail alike).
std::optional<WindowVerdict> data_unavailable_stop(const std::vector<nlohmann::json>& terminal_records);

// Completed: a result with `data` and `timing`. Failed: a failure of the arm with the trainer's
// class (NaN, non-finite gradient, OOM), except a dead data-parallel rank, thrown as RankFailure so
// the runner notes it and leaves the unit open. TimedOut: invalid (the safety timeout). Interrupted:
// thrown, so the runner sees its stop flag and leaves the unit open for the checkpoint to resume.
UnitOutcome training_outcome(const train::TrainResult& result, std::string_view experiment_id, const Unit& unit,
                             nlohmann::json data, nlohmann::json timing);

}  // namespace k3lab::experiments
