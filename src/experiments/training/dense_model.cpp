#include "k3lab/experiments/training/dense_model.hpp"

#include "k3lab/models/layer_schedule.hpp"

namespace k3lab::experiments::training {

models::ModelConfig dense_model_config(const DenseModel& model) {
  models::ModelConfig c;
  c.vocab_size = model.vocab_size;
  c.hidden_size = model.d_model;
  c.schedule = models::uniform_schedule(models::MixerKind::Attention, model.n_layers);
  c.attention.num_heads = model.n_heads;
  c.attention.head_dim = model.head_dim;
  c.attention.rope_theta = 10000.0;
  c.ffn.kind = models::FfnKind::SwiGlu;
  c.ffn.intermediate_size = model.ffn_hidden;
  c.tie_embeddings = true;
  return c;
}

}  // namespace k3lab::experiments::training
