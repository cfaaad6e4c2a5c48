#pragma once
// attn-res (seed experiment four): ordinary residuals vs Full AttnRes vs Block AttnRes (12-layer
// blocks), five paired seeds. The design: its arms, the frozen run ledger (training/design.hpp: seed
// by seed, the three arms inside each seed, so a stopped run leaves complete pairs), what `k3lab plan`
// shows, and the module's one factory. Running: run_unit.hpp; page: page.hpp.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn_res/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::attn_res {

// ordinary-residual, full-attnres, block-attnres.
const std::vector<std::string>& arm_ids();

std::vector<Unit> enumerate_units(const Parameters& p);

// Runs by axis, blocks, tokens, the decision rule's numbers and a labelled GPU-hour estimate.
nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::attn_res
