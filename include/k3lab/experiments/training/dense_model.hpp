#pragma once
// The dense decoder several proxy experiments train: the protocol's shape, full causal attention in
// every layer (RoPE 10000), a SwiGLU FFN of ffn_hidden and tied embeddings. A module changes what its
// arms vary (residual path, FFN kind, quantizer) and validates.
#include "k3lab/experiments/training/parameters.hpp"
#include "k3lab/models/model_config.hpp"

namespace k3lab::experiments::training {

models::ModelConfig dense_model_config(const DenseModel& model);

}  // namespace k3lab::experiments::training
