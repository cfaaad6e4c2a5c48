#include "hybrid_attention/arm_model.hpp"

#include <stdexcept>

#include "hybrid_attention/units.hpp"
#include "k3lab/models/param_count.hpp"

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

models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm) {
  const auto& m = p.model;
  models::ModelConfig c;
  c.vocab_size = m.vocab_size;
  c.hidden_size = m.d_model;
  c.schedule = arm_schedule_string(arm, m.n_layers);
  c.kda.num_heads = m.n_heads;
  c.kda.head_dim = m.head_dim;
  c.kda.gate_lower_bound = -5.0;
  c.kda.full_rank_output_gate = true;
  c.kda.chunk_size = m.kda_chunk_size;
  c.mla.num_heads = m.n_heads;
  c.mla.q_lora_rank = 0;
  c.mla.kv_lora_rank = m.mla_kv_latent_dim;
  c.mla.qk_nope_head_dim = m.head_dim;
  c.mla.qk_rope_head_dim = std::max<std::int64_t>(1, m.head_dim / 2);
  c.mla.v_head_dim = m.head_dim;
  c.mla.output_gate = true;
  c.ffn.kind = models::FfnKind::SwiGlu;
  c.tie_embeddings = true;
  return models::match_parameters(c, p.target_parameters, p.parameter_tolerance, m.ffn_multiple);
}

}  // namespace k3lab::experiments::hybrid_attention
