#pragma once
// hybrid-attention (seed experiment three): full attention vs all-KDA vs hybrid 3 KDA : 1 MLA at 120M
// parameters. The design: its arms, the frozen run ledger (training/design.hpp: seed by seed, the
// three arms inside each seed), what `k3lab plan` shows, and the module's one factory. Running:
// run_unit.hpp; page: page.hpp.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::hybrid_attention {

// full-attention, all-kda, hybrid-3kda-1mla: the seed's three memory strategies.
const std::vector<std::string>& arm_ids();

// The mixer of every layer ("kda" or "mla") for an arm.
std::vector<std::string> layer_schedule(const std::string& arm, int n_layers);

std::vector<Unit> enumerate_units(const Parameters& p);

// Runs by axis, tokens, steps, evaluations, parameter target and a labelled GPU-hour estimate.
nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::hybrid_attention
