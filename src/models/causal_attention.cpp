#include <k3lab/models/causal_attention.hpp>

#include <k3lab/models/linear.hpp>
#include <k3lab/models/rope.hpp>

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace k3lab::models {

torch::Tensor causal_softmax_attention(const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v, double scale) {
  if (!q.defined() || !k.defined() || !v.defined() || q.dim() != 4 || k.dim() != 4 || v.dim() != 4) {
    throw std::invalid_argument("causal_softmax_attention: q, k, v must be (B, H, T|S, d)");
  }
  const std::int64_t T = q.size(2), S = k.size(2);
  if (S < T || v.size(2) != S || k.size(3) != q.size(3)) {
    throw std::invalid_argument("causal_softmax_attention: need S >= T keys/values of q's width");
  }
  const auto cdt = q.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  auto scores = torch::matmul(q.to(cdt), k.to(cdt).transpose(-1, -2)) * scale;  // (B, H, T, S)
  const auto idx = torch::TensorOptions().dtype(torch::kLong).device(q.device());
  const auto allowed = torch::arange(S, idx).unsqueeze(0) <= (torch::arange(T, idx) + (S - T)).unsqueeze(1);
  scores = scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
  return torch::matmul(torch::softmax(scores, -1), v.to(cdt)).to(q.scalar_type());  // (B, H, T, dv)
}

std::int64_t KvCache::bytes() const {
  std::int64_t total = 0;
  for (const auto* t : {&key, &value}) {
    if (t->defined()) total += t->numel() * static_cast<std::int64_t>(t->element_size());
  }
  return total;
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const AttentionOptions& options) : options_(options) {
  if (options_.hidden_size <= 0 || options_.num_heads <= 0 || options_.head_dim <= 0) {
    throw std::invalid_argument("CausalSelfAttention: hidden_size, num_heads and head_dim must be positive");
  }
  if (options_.rope_theta < 0.0 || (options_.rope_theta > 0.0 && options_.head_dim % 2 != 0)) {
    throw std::invalid_argument("CausalSelfAttention: rope_theta must be 0 (NoPE) or > 0 with an even head_dim");
  }
  const auto D = options_.hidden_size, HD = options_.num_heads * options_.head_dim;
  q_proj = register_module("q_proj", projection(D, HD));
  k_proj = register_module("k_proj", projection(D, HD));
  v_proj = register_module("v_proj", projection(D, HD));
  o_proj = register_module("o_proj", projection(HD, D));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) { return attend(x, nullptr); }

torch::Tensor CausalSelfAttentionImpl::forward_with_cache(const torch::Tensor& x, KvCache& cache) {
  return attend(x, &cache);
}

torch::Tensor CausalSelfAttentionImpl::attend(const torch::Tensor& x, KvCache* cache) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != options_.hidden_size) {
    throw std::invalid_argument("CausalSelfAttention: input must be (B, T, " +
                                std::to_string(options_.hidden_size) + ")");
  }
  const auto B = x.size(0), T = x.size(1), H = options_.num_heads, d = options_.head_dim;
  auto heads = [&](const torch::Tensor& y) { return y.view({B, T, H, d}).transpose(1, 2); };
  auto q = heads(q_proj(x));  // (B, H, T, d)
  auto k = heads(k_proj(x));
  auto v = heads(v_proj(x));
  const std::int64_t start = cache ? cache->length() : 0;
  if (options_.rope_theta > 0.0) {
    q = apply_rope(q, start, options_.rope_theta);
    k = apply_rope(k, start, options_.rope_theta);
  }
  if (cache) {
    cache->key = cache->key.defined() ? torch::cat({cache->key, k}, 2) : k;  // (B, H, S, d)
    cache->value = cache->value.defined() ? torch::cat({cache->value, v}, 2) : v;
    k = cache->key;
    v = cache->value;
  }
  const auto o = causal_softmax_attention(q, k, v, 1.0 / std::sqrt(static_cast<double>(d)));
  return o_proj(o.transpose(1, 2).reshape({B, T, H * d}));  // (B, T, D)
}

}  // namespace k3lab::models
