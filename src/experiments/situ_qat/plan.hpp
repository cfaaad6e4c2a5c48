#pragma once
// What `k3lab plan situ-qat` shows beyond the unit list: runs by axis, tokens, checkpoints, the QAT
// setup and a labelled GPU-hour estimate.
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

}  // namespace k3lab::experiments::situ_qat
