#include "attn_res/residual_memory.hpp"

#include <stdexcept>

namespace k3lab::experiments::attn_res {

std::int64_t stored_residual_sources(models::ResidualMode mode, std::int64_t n_layers, std::int64_t block_layers) {
  if (n_layers < 1 || block_layers < 1) {
    throw std::invalid_argument("stored_residual_sources: n_layers and block_layers must be at least 1");
  }
  switch (mode) {
    case models::ResidualMode::Standard: return 1;
    case models::ResidualMode::FullAttnRes: return 2 * n_layers + 1;
    case models::ResidualMode::BlockAttnRes: return (n_layers + block_layers - 1) / block_layers + 1;
  }
  throw std::invalid_argument("stored_residual_sources: unknown residual mode");
}

nlohmann::json ResidualMemory::to_json() const {
  return {{"sources", sources},
          {"d_model", d_model},
          {"dtype_bytes", dtype_bytes},
          {"micro_batch_tokens", tokens},
          {"bytes", bytes()},
          {"formula", "sources x d_model x dtype_bytes x micro_batch_tokens"}};
}

ResidualMemory stored_residual_memory(const models::ModelConfig& model, std::int64_t dtype_bytes,
                                      std::int64_t micro_batch_tokens) {
  return {stored_residual_sources(model.residual.mode, model.num_layers(), model.residual.block_size), model.hidden_size,
          dtype_bytes, micro_batch_tokens};
}

}  // namespace k3lab::experiments::attn_res
