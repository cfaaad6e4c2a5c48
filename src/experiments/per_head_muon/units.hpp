#pragma once
// per-head-muon (seed experiment seven): AdamW vs standard Muon vs Per-Head Muon, an equal
// eight-configuration search over two pilot seeds, then five fresh confirmatory seeds per optimizer.
// The design: its arms, the frozen run ledger, what `k3lab plan` shows, and the module's one factory.
// Running: run_unit.hpp (optimizers: muon_optimizer.hpp, selection: selection.hpp); page: page.hpp.
//
// Unit ids: phase=pilot/arm=<arm>/config=<c>/seed=<s>       (c = 1..grid size, learning-rate major)
//           phase=confirm/arm=<arm>/config=selected/seed=<s>
// A confirmatory unit's configuration is a placeholder resolved at run time: the arm's configuration
// with the lowest mean pilot validation loss. Order: every pilot run (seed, configuration, arm) before
// any confirmatory run (seed, arm), because the confirmatory runs depend on the frozen selection.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "per_head_muon/parameters.hpp"

namespace k3lab::experiments::per_head_muon {

inline constexpr const char* kSelectedConfiguration = "selected";
// The predeclared selection rule, recorded in every confirmatory unit's spec.
inline constexpr const char* kSelectionRule =
    "lowest mean validation loss over the pilot seeds at the pilot token budget; a failed or invalid pilot run counts "
    "as infinite loss for its configuration; ties go to the lower configuration id";

// adamw, muon, per-head-muon.
const std::vector<std::string>& arm_ids();

std::string pilot_unit_id(const std::string& arm, int configuration, std::uint64_t seed);
std::string confirmatory_unit_id(const std::string& arm, std::uint64_t seed);

std::vector<Unit> enumerate_units(const Parameters& p);

// Runs by phase and axis, the search grid, the selection rule, tokens and a labelled GPU-hour estimate.
nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::per_head_muon
