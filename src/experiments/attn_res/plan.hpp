#pragma once
// What `k3lab plan attn-res` shows beyond the unit list: runs by axis, blocks, tokens, the decision
// rule's numbers and a labelled GPU-hour estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "attn_res/parameters.hpp"
#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::attn_res {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::attn_res
