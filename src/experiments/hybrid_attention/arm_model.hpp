#pragma once
// The model of each arm: one shared shape (protocol parameters.model), the arm's layer schedule, and
// a feed-forward width solved so every arm lands within parameter_tolerance of target_parameters.
#include <string>

#include "hybrid_attention/parameters.hpp"
#include "k3lab/models/model_config.hpp"

namespace k3lab::experiments::hybrid_attention {

// Every choice the protocol leaves open is fixed here and the same for every arm:
//   KDA: n_heads x head_dim, K3's bounded gate (-5) and full-rank output gate, kda_chunk_size.
//   MLA: n_heads, no query LoRA, kv_lora_rank = mla_kv_latent_dim, qk_nope = v = head_dim,
//        qk_rope = head_dim / 2 (K3's 128:64 ratio; never rotated: NoPE), K3's output gate.
//   FFN: SwiGLU, width solved by models::match_parameters in steps of ffn_multiple.
//   Tied embeddings, RMSNorm eps 1e-5.
// Throws std::invalid_argument (from match_parameters) when no width meets the tolerance.
models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm);

// The schedule string ('K' / 'M' per layer) of an arm, from units.hpp's layer_schedule.
std::string arm_schedule_string(const std::string& arm, int n_layers);

}  // namespace k3lab::experiments::hybrid_attention
