#include "attn_res/arm_model.hpp"

#include <stdexcept>

#include "k3lab/models/layer_schedule.hpp"

namespace k3lab::experiments::attn_res {

models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm) {
  const auto& m = p.model;
  models::ModelConfig c;
  c.vocab_size = m.vocab_size;
  c.hidden_size = m.d_model;
  c.schedule = models::uniform_schedule(models::MixerKind::Attention, m.n_layers);
  c.attention.num_heads = m.n_heads;
  c.attention.head_dim = m.head_dim;
  c.ffn.kind = models::FfnKind::SwiGlu;
  c.ffn.intermediate_size = m.ffn_hidden;
  c.tie_embeddings = true;
  c.residual.block_size = p.attnres_block_layers;  // recorded in every arm; read by block_attn_res only
  if (arm == "ordinary-residual") {
    c.residual.mode = models::ResidualMode::Standard;
  } else if (arm == "full-attnres") {
    c.residual.mode = models::ResidualMode::FullAttnRes;
  } else if (arm == "block-attnres") {
    c.residual.mode = models::ResidualMode::BlockAttnRes;
  } else {
    throw std::invalid_argument("attn-res: unknown arm \"" + arm +
                                "\"; use ordinary-residual, full-attnres or block-attnres");
  }
  c.validate();
  return c;
}

}  // namespace k3lab::experiments::attn_res
