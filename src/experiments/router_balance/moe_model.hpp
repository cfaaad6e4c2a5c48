#pragma once
// The router-balance proxy model, assembled here from src/models building blocks because
// models::DecoderLM holds a dense FeedForward per block and has no hook for a routed one:
//   h = embed(tokens); per layer: h += attention(RMSNorm(h)); h += moe(RMSNorm(h))
//   logits = embed^T RMSNorm(h)   (tied embeddings)
// Full causal attention (n_heads x head_dim, RoPE 10000) in every layer; every layer is MoE, as
// parameters.model says. Identical across arms but for the routing control: same shapes, same init
// (models/init.hpp from the unit's seed), so every arm of a seed starts from the same weights.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "k3lab/models/causal_attention.hpp"
#include "k3lab/models/rms_norm.hpp"
#include "router_balance/moe_block.hpp"
#include "router_balance/parameters.hpp"

namespace k3lab::experiments::router_balance {

struct LmOutput {
  torch::Tensor logits;                // (B, T, V)
  torch::Tensor aux_loss;              // scalar sum over layers; undefined without the aux-loss control
  std::vector<RoutingStats> routing;   // one per layer
};

class MoeLayerImpl : public torch::nn::Module {
 public:
  MoeLayerImpl(const Parameters& p, const MoeOptions& moe);
  models::RMSNorm mixer_norm{nullptr}, ffn_norm{nullptr};
  models::CausalSelfAttention attention{nullptr};
  MoeBlock moe{nullptr};
};
TORCH_MODULE(MoeLayer);

class MoeLmImpl : public torch::nn::Module {
 public:
  MoeLmImpl(const Parameters& p, Control control, std::uint64_t init_seed);
  LmOutput forward(const torch::Tensor& tokens);  // (B, T) int64
  void update_biases(const std::vector<RoutingStats>& routing, double fixed_step);
  std::vector<std::vector<double>> biases() const;  // [layer][expert]

  torch::nn::Embedding embed{nullptr};
  torch::nn::ModuleList layers{nullptr};
  models::RMSNorm final_norm{nullptr};
};
TORCH_MODULE(MoeLm);

MoeOptions moe_options(const Parameters& p, Control control);

}  // namespace k3lab::experiments::router_balance
