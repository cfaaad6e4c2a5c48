#pragma once
// The parameters block of experiments/attn-res.json: the parts every proxy experiment shares
// (training/parameters.hpp) and this module's own fields.
#include <cstdint>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/parameters.hpp"

namespace k3lab::experiments::attn_res {

// n_layers: decoder layers (attention + MLP each), K3's unit for AttnRes block size.
using Model = training::DenseModel;

// The decision rule's numbers; its bootstrap settings are the shared part.
struct Decision : training::Bootstrap {
  double min_relative_improvement = 0;   // of mean paired validation loss vs ordinary residuals
  double max_memory_regression = 0;      // relative, peak stored residual memory
  double max_throughput_regression = 0;  // relative, training tokens per second
};

struct Parameters : training::Seeds, training::DataSource, training::TokenSchedule, training::OptimizerBlock,
                    training::DownstreamBlock {
  Model model;
  int attnres_block_layers = 0;
  Decision decision;
};

// The schema, the rules across fields and the typed parse (std::invalid_argument naming every bad field).
const training::ParameterSet<Parameters>& parameter_set();
inline const core::Schema& parameter_schema() { return parameter_set().schema(); }
inline Parameters parse_parameters(const nlohmann::json& parameters) { return parameter_set().parse(parameters); }

}  // namespace k3lab::experiments::attn_res
