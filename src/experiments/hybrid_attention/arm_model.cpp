#include "hybrid_attention/arm_model.hpp"

#include <stdexcept>

#include "hybrid_attention/units.hpp"
#include "k3lab/models/param_count.hpp"
#include "k3lab/train/bench.hpp"

namespace k3lab::experiments::hybrid_attention {

std::string arm_schedule_string(const std::string& arm, int n_layers) {
  std::string schedule;
  for (const auto& mixer : layer_schedule(arm, n_layers)) {
    if (mixer == "kda") schedule += 'K';
    else if (mixer == "mla") schedule += 'M';
    else throw std::logic_error("hybrid-attention: unknown mixer \"" + mixer + "\" in the layer schedule");
  }
  return schedule;
}

// The same builder as `k3lab bench train` (train::bench_model_config), so that a throughput record's
// shape is this model; only the feed-forward width is chosen here, to meet the parameter target.
models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm) {
  const auto& m = p.model;
  train::ThroughputShape shape;
  shape.schedule = arm_schedule_string(arm, m.n_layers);
  shape.d_model = m.d_model;
  shape.n_heads = m.n_heads;
  shape.head_dim = m.head_dim;
  shape.mla_kv_latent_dim = m.mla_kv_latent_dim;
  shape.kda_chunk_size = m.kda_chunk_size;
  shape.vocab_size = m.vocab_size;
  return models::match_parameters(train::bench_model_config(shape), p.target_parameters, p.parameter_tolerance,
                                  m.ffn_multiple);
}

}  // namespace k3lab::experiments::hybrid_attention
