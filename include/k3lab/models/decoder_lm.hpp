#pragma once
// Decoder-only language model with a per-layer mixer schedule (KDA / MLA / full attention),
// pre-norm blocks, a pluggable residual path and tied or untied embeddings.
//   h = embed(tokens); for each block: h += mixer(norm(h)); h += ffn(norm(h))   (Standard)
//   logits = head(final_norm(h))
#include <k3lab/models/causal_attention.hpp>
#include <k3lab/models/feed_forward.hpp>
#include <k3lab/models/kda_layer.hpp>
#include <k3lab/models/mla.hpp>
#include <k3lab/models/model_config.hpp>
#include <k3lab/models/residual.hpp>
#include <k3lab/models/rms_norm.hpp>

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace k3lab::models {

// Decode-time memory of one layer; only the member of the layer's mixer kind is used.
struct LayerCache {
  KdaLayerState kda;   // fixed size
  MlaCache mla;        // grows per token
  KvCache attention;   // grows per token
  std::int64_t bytes() const { return kda.bytes() + mla.bytes() + attention.bytes(); }
};

struct InferenceState {
  std::vector<LayerCache> layers;
  std::int64_t position = 0;  // tokens consumed so far
  std::int64_t bytes() const;
};

class DecoderBlockImpl : public torch::nn::Module {
 public:
  DecoderBlockImpl(const ModelConfig& config, MixerKind kind);

  torch::Tensor mix(const torch::Tensor& h);                            // mixer(norm(h))
  torch::Tensor mix_with_cache(const torch::Tensor& h, LayerCache& cache);
  torch::Tensor feed_forward(const torch::Tensor& h);                   // ffn(norm(h))

  MixerKind kind;
  RMSNorm mixer_norm{nullptr}, ffn_norm{nullptr};
  KdaLayer kda{nullptr};
  Mla mla{nullptr};
  CausalSelfAttention attention{nullptr};
  FeedForward ffn{nullptr};
};
TORCH_MODULE(DecoderBlock);

class DecoderLMImpl : public torch::nn::Module {
 public:
  // Validates the config and initialises every parameter from k3lab's generator (init.hpp).
  DecoderLMImpl(ModelConfig config, std::uint64_t init_seed);

  torch::Tensor forward(const torch::Tensor& tokens);  // (B, T) int64 -> logits (B, T, V)

  // Prefill or decode: continues from `state` (create it with new_inference_state) and updates it.
  // Feeding a sequence in pieces gives the same logits as one forward() over the whole sequence.
  torch::Tensor forward_with_state(const torch::Tensor& tokens, InferenceState& state);
  InferenceState new_inference_state() const;

  // Replaces the feed-forward quantisation hook of every block (nullptr: none). The constructor
  // installs an MxFakeQuantizer when config.ffn.quant is enabled.
  void set_ffn_fake_quantizer(const std::shared_ptr<const FakeQuantizer>& quantizer);

  const ModelConfig& config() const { return config_; }

  torch::nn::Embedding embed{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  RMSNorm final_norm{nullptr};
  torch::nn::Linear lm_head{nullptr};  // untied embeddings only
  std::shared_ptr<ResidualPathImpl> residual;

 private:
  torch::Tensor run(const torch::Tensor& tokens, InferenceState* state);
  ModelConfig config_;
};
TORCH_MODULE(DecoderLM);

// Sum of numel over the module's parameters (shared parameters counted once).
std::int64_t parameter_count(torch::nn::Module& module);

}  // namespace k3lab::models
