#pragma once
// Multi-head Latent Attention as in Kimi Linear / K3 (reference/kda.md section 5): NoPE (the
// "rope" slice is computed and concatenated but never rotated), optional low-rank query,
// optional sigmoid output gate (K3).
//   c_t   = RMSNorm(W_DKV x_t)                        (kv_lora_rank)
//   kR_t  = W_KR x_t                                  (qk_rope_head_dim, shared by all heads)
//   [kC_{t,i}; v_{t,i}] = W_UKV_i c_t
//   q_{t,i} = [qC; qR] = W_UQ_i RMSNorm(W_DQ x_t)     or W_Q_i x_t without q_lora
//   o_{t,i} = sum_j softmax_j(q_{t,i} . [kC_{j,i}; kR_j] / sqrt(nope + rope)) v_{j,i}
// The absorbed form folds W_UK into the query and W_UV into the output, so the cache holds only
// [c_t ; kR_t] per token (kv_lora_rank + qk_rope_head_dim values).
#include <k3lab/models/rms_norm.hpp>

#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace k3lab::models {

struct MlaOptions {
  std::int64_t hidden_size = 0;
  std::int64_t num_heads = 0;
  std::int64_t q_lora_rank = 0;  // 0: full-rank query projection (Kimi Linear); K3: 1536
  std::int64_t kv_lora_rank = 512;
  std::int64_t qk_nope_head_dim = 128;
  std::int64_t qk_rope_head_dim = 64;
  std::int64_t v_head_dim = 128;
  bool output_gate = true;        // K3's mla_use_output_gate
  double latent_norm_eps = 1e-6;  // q_a / kv_a layernorm eps in the K3 code
};

// Latent cache of one MLA layer: grows by one row per token.
struct MlaCache {
  torch::Tensor latent;    // (B, T, kv_lora_rank), normalised c
  torch::Tensor rope_key;  // (B, T, qk_rope_head_dim)
  std::int64_t length() const { return latent.defined() ? latent.size(1) : 0; }
  std::int64_t bytes() const;  // actual storage
};

class MlaImpl : public torch::nn::Module {
 public:
  explicit MlaImpl(const MlaOptions& options);

  // Plain form: per-head keys and values expanded from the latent. x (B, T, D) -> (B, T, D).
  torch::Tensor forward(const torch::Tensor& x);

  // Absorbed form over the cache: appends this chunk's latents, attends over the whole cache.
  // Used for decoding (T = 1) and for prefill into a cache.
  torch::Tensor forward_absorbed(const torch::Tensor& x, MlaCache& cache);

  // Bytes of cache one token adds: (kv_lora_rank + qk_rope_head_dim) * bytes_per_element.
  static std::int64_t cache_bytes_per_token(const MlaOptions& options, std::int64_t bytes_per_element);

  const MlaOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr};                      // without q_lora
  torch::nn::Linear q_a_proj{nullptr}, q_b_proj{nullptr};  // with q_lora
  RMSNorm q_a_norm{nullptr};
  torch::nn::Linear kv_a_proj{nullptr};  // hidden -> kv_lora_rank + qk_rope_head_dim
  RMSNorm kv_a_norm{nullptr};
  torch::nn::Linear kv_b_proj{nullptr};  // kv_lora_rank -> H * (nope + v)
  torch::nn::Linear g_proj{nullptr};     // output gate (K3)
  torch::nn::Linear o_proj{nullptr};

 private:
  struct Query {
    torch::Tensor nope, rope;  // (B, T, H, nope), (B, T, H, rope)
  };
  struct Latent {
    torch::Tensor c, rope_key;  // (B, T, kv_lora_rank), (B, T, rope)
  };
  Query query(const torch::Tensor& x);
  Latent latent(const torch::Tensor& x);
  torch::Tensor finish(const torch::Tensor& x, const torch::Tensor& o);  // o (B, T, H, v)
  void check_input(const torch::Tensor& x) const;

  MlaOptions options_;
};
TORCH_MODULE(Mla);

}  // namespace k3lab::models
