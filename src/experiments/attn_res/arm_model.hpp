#pragma once
// The model of each arm: one shared shape (protocol parameters.model) and the arm's residual path.
#include <string>

#include "attn_res/parameters.hpp"
#include "k3lab/models/model_config.hpp"

namespace k3lab::experiments::attn_res {

// Every choice the protocol leaves open is fixed here and the same for every arm: full causal
// softmax attention in every layer (n_heads x head_dim, RoPE theta 10000), SwiGLU of width
// ffn_hidden, tied embeddings, RMSNorm eps 1e-5. Only model.residual differs:
//   ordinary-residual: standard; full-attnres: full_attn_res;
//   block-attnres: block_attn_res with attnres_block_layers decoder layers per block.
// Throws std::invalid_argument for an unknown arm.
models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm);

}  // namespace k3lab::experiments::attn_res
