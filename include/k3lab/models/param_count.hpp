#pragma once
// Closed-form parameter counts for a ModelConfig (checked against built modules in the tests) and
// the feed-forward width rule that puts every arm of an ablation within a tolerance of one target.
// Torch-free.
#include <k3lab/models/model_config.hpp>

#include <cstdint>

namespace k3lab::models {

struct ParameterBreakdown {
  std::int64_t embedding = 0;
  std::int64_t lm_head = 0;      // 0 with tied embeddings
  std::int64_t norms = 0;        // block pre-norms and the final norm
  std::int64_t kda = 0;          // all KDA layers
  std::int64_t mla = 0;          // all MLA layers
  std::int64_t attention = 0;    // all full-attention layers
  std::int64_t ffn = 0;          // all feed-forwards
  std::int64_t residual = 0;     // residual-path parameters (0 for Standard)
  std::int64_t total() const;
  std::int64_t non_embedding() const { return total() - embedding - lm_head; }
};

std::int64_t kda_layer_parameters(const KdaConfig& kda, std::int64_t hidden_size);
std::int64_t mla_layer_parameters(const MlaConfig& mla, std::int64_t hidden_size);
std::int64_t attention_layer_parameters(const AttentionConfig& attention, std::int64_t hidden_size);
std::int64_t ffn_layer_parameters(const FfnConfig& ffn, std::int64_t hidden_size);

ParameterBreakdown parameter_breakdown(const ModelConfig& config);
std::int64_t count_parameters(const ModelConfig& config);

// Returns `config` with ffn.intermediate_size set to the multiple of `multiple` whose total count
// is closest to `target`, and checks |count - target| <= tolerance * target. Throws
// std::invalid_argument when no width qualifies (the rest of the model alone exceeds the target,
// or one step of `multiple` moves the count by more than the tolerance) and says which to change.
ModelConfig match_parameters(const ModelConfig& config, std::int64_t target, double tolerance = 0.005,
                             std::int64_t multiple = 8);

}  // namespace k3lab::models
