#pragma once
// The parameters block of experiments/hybrid-attention.json: the parts every proxy experiment shares
// (training/parameters.hpp) and this module's own fields.
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/parameters.hpp"

namespace k3lab::experiments::hybrid_attention {

// n_layers: a multiple of 4, the hybrid is n_layers/4 groups of 3 KDA + 1 MLA.
struct Model : training::ModelShape {
  std::int64_t mla_kv_latent_dim = 0;
  std::int64_t kda_chunk_size = 0;
  std::int64_t ffn_multiple = 0;  // each arm's FFN width is solved to the parameter target in these steps
};

struct Parameters : training::Seeds, training::DataSource, training::TokenSchedule, training::OptimizerBlock,
                    training::DownstreamBlock {
  // The paired downstream comparisons' bootstrap (the decision rule reads seed means); required with a
  // downstream suite, absent in protocol versions before 4.
  std::optional<training::Bootstrap> analysis;
  std::int64_t target_parameters = 0;
  double parameter_tolerance = 0;
  Model model;
  std::vector<std::int64_t> long_context_lengths;
  int long_context_examples = 0;
  // Examples (and clean-text rows) per length at the evaluations before the last; absent (protocol
  // versions before 6): every example at every evaluation.
  std::optional<std::uint64_t> long_context_checkpoint_examples;
  double safety_timeout_hours = 0;
};

// The schema, the rules across fields and the typed parse (std::invalid_argument naming every bad field).
const training::ParameterSet<Parameters>& parameter_set();
inline const core::Schema& parameter_schema() { return parameter_set().schema(); }
inline Parameters parse_parameters(const nlohmann::json& parameters) { return parameter_set().parse(parameters); }

}  // namespace k3lab::experiments::hybrid_attention
