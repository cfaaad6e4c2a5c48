#pragma once
// A decoder LM whose every feed-forward is a routed MoE block (moe_block.hpp), built from the same
// pieces as DecoderLM (which holds a dense FeedForward per block and has no routed one):
//   h = embed(tokens); per layer: h += attention(RMSNorm(h)); h += moe(RMSNorm(h))
//   logits = embed^T RMSNorm(h)   (tied embeddings)
// Full causal attention (num_heads x head_dim, RoPE) in every layer. Initialised by models/init.hpp
// from `init_seed`, so two models of the same shape start from the same weights whatever their
// routing control.
#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/pimpl.h>

#include "k3lab/models/causal_attention.hpp"
#include "k3lab/models/moe_block.hpp"
#include "k3lab/models/rms_norm.hpp"

namespace k3lab::models {

struct MoeLmOptions {
  std::int64_t vocab_size = 0;
  int n_layers = 0;
  AttentionOptions attention;  // hidden_size is the model width
  MoeOptions moe;              // moe.hidden_size equals attention.hidden_size
};

struct MoeLmOutput {
  torch::Tensor logits;                // (B, T, V)
  torch::Tensor aux_loss;              // scalar sum over layers; undefined without the aux-loss control
  std::vector<RoutingStats> routing;   // one per layer
};

class MoeLayerImpl : public torch::nn::Module {
 public:
  MoeLayerImpl(const AttentionOptions& attention_options, const MoeOptions& moe_options);
  RMSNorm mixer_norm{nullptr}, ffn_norm{nullptr};
  CausalSelfAttention attention{nullptr};
  MoeBlock moe{nullptr};
};
TORCH_MODULE(MoeLayer);

class MoeLmImpl : public torch::nn::Module {
 public:
  // Throws std::invalid_argument when the attention and MoE widths differ.
  MoeLmImpl(const MoeLmOptions& options, std::uint64_t init_seed);
  MoeLmOutput forward(const torch::Tensor& tokens);  // (B, T) int64
  // After the optimizer update, layer by layer from the last forward's routing.
  void update_biases(const std::vector<RoutingStats>& routing, double fixed_step);
  std::vector<std::vector<double>> biases() const;  // [layer][expert]

  torch::nn::Embedding embed{nullptr};
  torch::nn::ModuleList layers{nullptr};
  RMSNorm final_norm{nullptr};
};
TORCH_MODULE(MoeLm);

}  // namespace k3lab::models
