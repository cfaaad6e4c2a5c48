#pragma once
// router-balance (seed experiment five): no control vs aux loss vs fixed-step bias vs Quantile
// Balancing in a small MoE, five paired seeds. The design: its arms and their controls, the frozen run
// ledger (training/design.hpp: seed by seed, the four arms inside each seed), what `k3lab plan` shows,
// and the module's one factory. Running: run_unit.hpp (MoE model moe_model.hpp, controls
// router_control.hpp); page: page.hpp.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

// no-control, aux-loss, fixed-step-bias, quantile-balancing.
const std::vector<std::string>& arm_ids();

// The balancing control of an arm and its settings.
nlohmann::json control_spec(const Parameters& p, const std::string& arm);

std::vector<Unit> enumerate_units(const Parameters& p);

// Runs by axis, updates, tokens, routing capacity and a labelled GPU-hour estimate.
nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::router_balance
