#include <k3lab/models/mla.hpp>

#include <k3lab/models/causal_attention.hpp>
#include <k3lab/models/linear.hpp>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::models {

std::int64_t MlaCache::bytes() const {
  std::int64_t total = 0;
  for (const auto* t : {&latent, &rope_key}) {
    if (t->defined()) total += t->numel() * static_cast<std::int64_t>(t->element_size());
  }
  return total;
}

std::int64_t MlaImpl::cache_bytes_per_token(const MlaOptions& o, std::int64_t bytes_per_element) {
  return (o.kv_lora_rank + o.qk_rope_head_dim) * bytes_per_element;
}

MlaImpl::MlaImpl(const MlaOptions& options) : options_(options) {
  const auto& o = options_;
  if (o.hidden_size <= 0 || o.num_heads <= 0 || o.kv_lora_rank <= 0 || o.qk_nope_head_dim <= 0 ||
      o.qk_rope_head_dim < 0 || o.v_head_dim <= 0 || o.q_lora_rank < 0 || !(o.latent_norm_eps > 0)) {
    throw std::invalid_argument("Mla: hidden_size, num_heads, kv_lora_rank, qk_nope_head_dim and "
                                "v_head_dim must be positive; q_lora_rank and qk_rope_head_dim >= 0");
  }
  const auto D = o.hidden_size, H = o.num_heads;
  const auto qk_dim = o.qk_nope_head_dim + o.qk_rope_head_dim;
  if (o.q_lora_rank > 0) {
    q_a_proj = register_module("q_a_proj", projection(D, o.q_lora_rank));
    q_a_norm = register_module("q_a_norm", RMSNorm(o.q_lora_rank, o.latent_norm_eps));
    q_b_proj = register_module("q_b_proj", projection(o.q_lora_rank, H * qk_dim));
  } else {
    q_proj = register_module("q_proj", projection(D, H * qk_dim));
  }
  kv_a_proj = register_module("kv_a_proj", projection(D, o.kv_lora_rank + o.qk_rope_head_dim));
  kv_a_norm = register_module("kv_a_norm", RMSNorm(o.kv_lora_rank, o.latent_norm_eps));
  kv_b_proj = register_module("kv_b_proj", projection(o.kv_lora_rank, H * (o.qk_nope_head_dim + o.v_head_dim)));
  if (o.output_gate) g_proj = register_module("g_proj", projection(D, H * o.v_head_dim));
  o_proj = register_module("o_proj", projection(H * o.v_head_dim, D));
}

void MlaImpl::check_input(const torch::Tensor& x) const {
  if (!x.defined() || x.dim() != 3 || x.size(2) != options_.hidden_size) {
    throw std::invalid_argument("Mla: input must be (B, T, " + std::to_string(options_.hidden_size) + ")");
  }
}

MlaImpl::Query MlaImpl::query(const torch::Tensor& x) {
  const auto& o = options_;
  const auto B = x.size(0), T = x.size(1);
  const auto q = (o.q_lora_rank > 0 ? q_b_proj(q_a_norm(q_a_proj(x))) : q_proj(x))
                     .view({B, T, o.num_heads, o.qk_nope_head_dim + o.qk_rope_head_dim});
  return {q.narrow(-1, 0, o.qk_nope_head_dim), q.narrow(-1, o.qk_nope_head_dim, o.qk_rope_head_dim)};
}

MlaImpl::Latent MlaImpl::latent(const torch::Tensor& x) {
  const auto& o = options_;
  const auto kv_a = kv_a_proj(x);  // (B, T, kv_lora_rank + rope)
  return {kv_a_norm(kv_a.narrow(-1, 0, o.kv_lora_rank)), kv_a.narrow(-1, o.kv_lora_rank, o.qk_rope_head_dim)};
}

torch::Tensor MlaImpl::finish(const torch::Tensor& x, const torch::Tensor& o) {
  const auto B = x.size(0), T = x.size(1), H = options_.num_heads, dv = options_.v_head_dim;
  auto y = o;  // (B, T, H, v)
  if (options_.output_gate) y = y * torch::sigmoid(g_proj(x).view({B, T, H, dv}));
  return o_proj(y.reshape({B, T, H * dv}));  // (B, T, D)
}

torch::Tensor MlaImpl::forward(const torch::Tensor& x) {
  check_input(x);
  const auto& o = options_;
  const auto B = x.size(0), T = x.size(1), H = o.num_heads;
  const auto q = query(x);
  const auto lat = latent(x);
  const auto kv = kv_b_proj(lat.c).view({B, T, H, o.qk_nope_head_dim + o.v_head_dim});
  const auto k = torch::cat({kv.narrow(-1, 0, o.qk_nope_head_dim),
                             lat.rope_key.unsqueeze(2).expand({B, T, H, o.qk_rope_head_dim})}, -1);
  const auto v = kv.narrow(-1, o.qk_nope_head_dim, o.v_head_dim);           // (B, T, H, v)
  const auto q_full = torch::cat({q.nope, q.rope}, -1);                      // (B, T, H, nope + rope)
  const double scale = 1.0 / std::sqrt(static_cast<double>(o.qk_nope_head_dim + o.qk_rope_head_dim));
  const auto out = causal_softmax_attention(q_full.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), scale);
  return finish(x, out.transpose(1, 2));                                      // out (B, H, T, v)
}

torch::Tensor MlaImpl::forward_absorbed(const torch::Tensor& x, MlaCache& cache) {
  check_input(x);
  const auto& o = options_;
  const auto H = o.num_heads;
  const auto q = query(x);
  const auto lat = latent(x);
  cache.latent = cache.latent.defined() ? torch::cat({cache.latent, lat.c}, 1) : lat.c;  // (B, S, c)
  cache.rope_key = cache.rope_key.defined() ? torch::cat({cache.rope_key, lat.rope_key}, 1) : lat.rope_key;

  const auto w_ukv = kv_b_proj->weight.view({H, o.qk_nope_head_dim + o.v_head_dim, o.kv_lora_rank});
  const auto w_uk = w_ukv.narrow(1, 0, o.qk_nope_head_dim);        // (H, nope, c)
  const auto w_uv = w_ukv.narrow(1, o.qk_nope_head_dim, o.v_head_dim);  // (H, v, c)
  const auto q_latent = torch::einsum("bthn,hnc->bhtc", {q.nope, w_uk});  // (B, H, T, c)
  const auto q_abs = torch::cat({q_latent, q.rope.transpose(1, 2)}, -1);  // (B, H, T, c + rope)
  const auto keys = torch::cat({cache.latent, cache.rope_key}, -1).unsqueeze(1);  // (B, 1, S, c + rope)
  const auto values = cache.latent.unsqueeze(1);                                  // (B, 1, S, c)
  const double scale = 1.0 / std::sqrt(static_cast<double>(o.qk_nope_head_dim + o.qk_rope_head_dim));
  const auto context = causal_softmax_attention(q_abs, keys, values, scale);     // (B, H, T, c)
  return finish(x, torch::einsum("bhtc,hvc->bthv", {context, w_uv}));            // (B, T, H, v)
}

}  // namespace k3lab::models
