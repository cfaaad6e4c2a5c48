#pragma once
// What a smoke page may say, generated from the run's real sizes (parameters, tokens, seeds) rather
// than the protocol's full-scale can-say text: the smoke profile only shows that the code path runs.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments::training {

struct RunScale {
  std::string parameters;  // e.g. "199,808 trainable parameters (measured)"
  double tokens_per_run = 0;
  std::vector<std::uint64_t> seeds;
  std::size_t runs = 0;
};

// "1,234,567": a count rounded to an integer with thousands separators.
std::string count_text(double value);

// From a module's plan details and units; the trainable parameters the result records measured
// (data.parameters) replace the plan's estimate when there are any.
RunScale run_scale(const nlohmann::json& plan, const std::vector<Unit>& units,
                   const std::vector<nlohmann::json>& terminal = {});

// The smoke page's one can-say line, the smoke run's sizes beside the full profile's.
std::string smoke_can_say(const std::string& experiment_id, const RunScale& smoke, const RunScale& full);

}  // namespace k3lab::experiments::training
