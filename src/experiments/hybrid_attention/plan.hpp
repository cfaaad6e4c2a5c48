#pragma once
// What `k3lab plan hybrid-attention` shows beyond the unit list: runs by axis, tokens, steps,
// evaluations, parameter target and a labelled GPU-hour estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::hybrid_attention {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::hybrid_attention
