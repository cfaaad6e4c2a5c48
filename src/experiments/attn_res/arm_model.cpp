#include "attn_res/arm_model.hpp"

#include <stdexcept>

#include "k3lab/experiments/training/dense_model.hpp"

namespace k3lab::experiments::attn_res {

models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm) {
  auto c = training::dense_model_config(p.model);
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
