#pragma once
// The parameters block of experiments/situ-qat.json: declared schema and typed view.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/core/schema.hpp"

namespace k3lab::experiments::situ_qat {

struct Model {
  std::int64_t vocab_size = 0;
  std::int64_t d_model = 0;
  int n_layers = 0;
  int n_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden = 0;  // gated FFN hidden width (the quantized expert-style FFN)
};

struct Quantization {
  std::string weight_format;      // FFN weights
  std::string activation_format;  // FFN input activations
  int block_size = 0;             // elements sharing one E8M0 scale, along the reduction dimension
  std::string scale_rounding;
  std::string element_rounding;
};

struct Parameters {
  std::vector<std::uint64_t> seeds;
  Model model;
  double beta1 = 0;  // SiTU-GLU gate cap
  double beta2 = 0;  // SiTU-GLU up-branch cap
  Quantization quantization;
  std::string dataset;
  std::string tokenizer;
  std::uint64_t data_order_seed = 0;
  std::int64_t token_budget = 0;
  std::int64_t batch_tokens = 0;
  std::int64_t sequence_length = 0;
  std::int64_t eval_interval_tokens = 0;
  std::int64_t validation_tokens = 0;
  std::int64_t histogram_interval_tokens = 0;
  std::int64_t histogram_sample_tokens = 0;
  int histogram_bins = 0;
  int loss_spike_window_updates = 0;
  double loss_spike_threshold_sigma = 0;
  double saturation_tanh_level = 0;
  nlohmann::json optimizer;  // validated by the schema; consumed by the trainer as is
  double confidence = 0;
  int bootstrap_resamples = 0;
  std::uint64_t bootstrap_seed = 0;

  // Approximate trainable parameters (tied embedding, attention, gated FFN).
  double approximate_parameters() const;
};

const core::Schema& parameter_schema();

// Validates (schema, then cross-field rules) and converts; throws std::invalid_argument naming fields.
Parameters parse_parameters(const nlohmann::json& parameters);

}  // namespace k3lab::experiments::situ_qat
