#pragma once
// Full causal multi-head attention: plain softmax with a causal mask (no SDPA: the C++ API is newer
// than LibTorch 1.13), optional RoPE, and a growing KV cache for decoding.
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace k3lab::models {

// softmax(q k^T * scale + causal mask) v, with the T queries being the last T of the S keys.
// q (B, H, T, d), k (B, H, S, d), v (B, H, S, dv) -> (B, H, T, dv). Softmax in float32.
torch::Tensor causal_softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v, double scale);

struct AttentionOptions {
  std::int64_t hidden_size = 0;
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  double rope_theta = 0.0;  // 0: no positional encoding (NoPE); > 0: RoPE base
};

struct KvCache {
  torch::Tensor key, value;  // (B, H, T, head_dim) each
  std::int64_t length() const { return key.defined() ? key.size(2) : 0; }
  std::int64_t bytes() const;
};

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const AttentionOptions& options);

  torch::Tensor forward(const torch::Tensor& x);  // (B, T, D) -> (B, T, D)
  // Appends this chunk's keys and values to `cache` and attends over all of them.
  torch::Tensor forward_with_cache(const torch::Tensor& x, KvCache& cache);

  const AttentionOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  torch::Tensor attend(const torch::Tensor& x, KvCache* cache);
  AttentionOptions options_;
};
TORCH_MODULE(CausalSelfAttention);

}  // namespace k3lab::models
