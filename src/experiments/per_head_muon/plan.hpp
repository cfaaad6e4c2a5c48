#pragma once
// What `k3lab plan per-head-muon` shows beyond the unit list: pilot and confirmatory counts by axis,
// the search grid, tokens and a labelled GPU-hour estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "per_head_muon/parameters.hpp"

namespace k3lab::experiments::per_head_muon {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::per_head_muon
