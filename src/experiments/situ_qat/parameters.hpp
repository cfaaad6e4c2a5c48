#pragma once
// The parameters block of experiments/situ-qat.json: the parts every proxy experiment shares
// (training/parameters.hpp) and this module's own fields.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"
#include "k3lab/experiments/training/downstream_spec.hpp"
#include "k3lab/experiments/training/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// ffn_hidden: the gated FFN, quantized like an expert FFN.
using Model = training::DenseModel;

struct Quantization {
  std::string weight_format;      // FFN weights
  std::string activation_format;  // FFN input activations
  int block_size = 0;             // elements sharing one E8M0 scale, along the reduction dimension
  std::string scale_rounding;
  std::string element_rounding;
};

// Bootstrap: under "analysis".
struct Parameters : training::Seeds,
                    training::DataSource,
                    training::TokenSchedule,
                    training::OptimizerBlock,
                    training::Bootstrap,
                    training::DownstreamBlock {
  Model model;
  double beta1 = 0;  // SiTU-GLU gate cap
  double beta2 = 0;  // SiTU-GLU up-branch cap
  Quantization quantization;
  std::int64_t histogram_interval_tokens = 0;
  std::int64_t histogram_sample_tokens = 0;
  int histogram_bins = 0;
  int loss_spike_window_updates = 0;
  double loss_spike_threshold_sigma = 0;
  double saturation_tanh_level = 0;
};

// The schema, the rules across fields and the typed parse (std::invalid_argument naming every bad field).
const training::ParameterSet<Parameters>& parameter_set();
inline const core::Schema& parameter_schema() { return parameter_set().schema(); }
inline Parameters parse_parameters(const nlohmann::json& parameters) { return parameter_set().parse(parameters); }

}  // namespace k3lab::experiments::situ_qat
