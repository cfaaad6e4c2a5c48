#pragma once
// The parameters block of experiments/per-head-muon.json: the parts every proxy experiment shares
// (training/parameters.hpp) and this module's own fields.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/parameters.hpp"

namespace k3lab::experiments::per_head_muon {

using Model = training::DenseModel;

// One point of the search every optimizer gets (1-based id in unit ids).
struct Configuration {
  int id = 0;
  double learning_rate = 0;
  double weight_decay = 0;
};

// token_budget: confirmatory runs. Bootstrap: under "decision".
struct Parameters : training::DataSource, training::TokenSchedule, training::Bootstrap, training::DownstreamBlock {
  std::vector<std::uint64_t> pilot_seeds;
  std::vector<std::uint64_t> confirmatory_seeds;
  Model model;
  std::int64_t pilot_token_budget = 0;  // pilot runs
  std::vector<double> learning_rates;
  std::vector<double> weight_decays;
  nlohmann::json muon;      // validated by the schema; consumed by the optimizer as is
  nlohmann::json adamw;     // likewise
  nlohmann::json schedule;  // likewise
  double max_step_time_overhead = 0;

  // The search grid, learning-rate major: ids 1..(rates x decays).
  std::vector<Configuration> configurations() const;
};

// The schema, the rules across fields and the typed parse (std::invalid_argument naming every bad field).
const training::ParameterSet<Parameters>& parameter_set();
inline const core::Schema& parameter_schema() { return parameter_set().schema(); }
inline Parameters parse_parameters(const nlohmann::json& parameters) { return parameter_set().parse(parameters); }

}  // namespace k3lab::experiments::per_head_muon
