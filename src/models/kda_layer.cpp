#include <k3lab/models/kda_layer.hpp>

#include <k3lab/models/kda.hpp>
#include <k3lab/models/kda_gate.hpp>
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/linear.hpp>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::models {

namespace {

void validate(const KdaLayerOptions& o) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("KdaLayer: " + what);
  };
  require(o.hidden_size > 0, "hidden_size must be positive");
  require(o.num_heads > 0, "num_heads must be positive");
  require(o.head_dim > 0, "head_dim must be positive");
  require(o.conv_kernel >= 1, "conv_kernel must be >= 1");
  require(o.gate_rank >= 0, "gate_rank must be >= 0 (0 means head_dim)");
  require(o.norm_eps > 0.0, "norm_eps must be > 0");
  require(o.chunk_size > 0 && (o.chunk_size <= 16 || o.chunk_size % 16 == 0),
          "chunk_size must be <= 16 or a multiple of 16");
  require(!o.gate_lower_bound || (std::isfinite(*o.gate_lower_bound) && *o.gate_lower_bound < 0.0),
          "gate_lower_bound must be finite and < 0 (K3: -5), or absent for the softplus gate");
}

std::int64_t tensor_bytes(const torch::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<std::int64_t>(t.element_size()) : 0;
}

}  // namespace

std::int64_t KdaLayerState::bytes() const {
  return tensor_bytes(conv_q) + tensor_bytes(conv_k) + tensor_bytes(conv_v) + tensor_bytes(recurrent);
}

KdaLayerImpl::KdaLayerImpl(const KdaLayerOptions& options) : options_(options) {
  validate(options_);
  const auto D = options_.hidden_size, H = options_.num_heads, K = options_.head_dim;
  const auto rank = options_.gate_rank > 0 ? options_.gate_rank : K;
  q_proj = register_module("q_proj", projection(D, H * K));
  k_proj = register_module("k_proj", projection(D, H * K));
  v_proj = register_module("v_proj", projection(D, H * K));
  q_conv = register_module("q_conv", ShortConv(H * K, options_.conv_kernel));
  k_conv = register_module("k_conv", ShortConv(H * K, options_.conv_kernel));
  v_conv = register_module("v_conv", ShortConv(H * K, options_.conv_kernel));
  f_a_proj = register_module("f_a_proj", projection(D, rank));
  f_b_proj = register_module("f_b_proj", projection(rank, H * K));
  b_proj = register_module("b_proj", projection(D, H));
  if (options_.full_rank_output_gate) {
    g_proj = register_module("g_proj", projection(D, H * K));
  } else {
    g_a_proj = register_module("g_a_proj", projection(D, rank));
    g_b_proj = register_module("g_b_proj", projection(rank, H * K, /*bias=*/true));
  }
  o_norm = register_module("o_norm", GatedRMSNorm(K, options_.norm_eps));
  o_proj = register_module("o_proj", projection(H * K, D));
  A_log = register_parameter("A_log", torch::zeros({H}));
  dt_bias = register_parameter("dt_bias", torch::zeros({H * K}));
}

KdaLayerState KdaLayerImpl::initial_state(std::int64_t batch, const torch::TensorOptions& options) const {
  const auto H = options_.num_heads, K = options_.head_dim;
  const auto state_dtype = options.dtype() == torch::kDouble ? torch::kDouble : torch::kFloat;
  KdaLayerState state;
  state.conv_q = q_conv->empty_cache(batch, options);
  state.conv_k = k_conv->empty_cache(batch, options);
  state.conv_v = v_conv->empty_cache(batch, options);
  state.recurrent = torch::zeros({batch, H, K, K}, options.dtype(state_dtype));
  return state;
}

KdaLayerImpl::Projected KdaLayerImpl::project(const torch::Tensor& x, KdaLayerState* state) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != options_.hidden_size) {
    throw std::invalid_argument("KdaLayer: input must be (B, T, " +
                                std::to_string(options_.hidden_size) + ")");
  }
  const auto B = x.size(0), T = x.size(1), H = options_.num_heads, K = options_.head_dim;
  auto conv = [&](ShortConv& c, const torch::Tensor& in, torch::Tensor* cache) {
    return cache ? c->forward_with_cache(in, *cache) : c->forward(in);  // (B, T, H * K)
  };
  Projected p;
  p.q = l2_normalize(conv(q_conv, q_proj(x), state ? &state->conv_q : nullptr).view({B, T, H, K}));
  p.k = l2_normalize(conv(k_conv, k_proj(x), state ? &state->conv_k : nullptr).view({B, T, H, K}));
  p.v = conv(v_conv, v_proj(x), state ? &state->conv_v : nullptr).view({B, T, H, K});
  const auto g_raw = f_b_proj(f_a_proj(x)).view({B, T, H, K});
  p.g = options_.gate_lower_bound
            ? kda_gate_lower_bound(g_raw, A_log, dt_bias, *options_.gate_lower_bound)
            : kda_gate_softplus(g_raw, A_log, dt_bias);  // (B, T, H, K)
  p.beta = torch::sigmoid(b_proj(x));                     // (B, T, H)
  return p;
}

torch::Tensor KdaLayerImpl::output(const torch::Tensor& x, const torch::Tensor& o) {
  const auto B = x.size(0), T = x.size(1), H = options_.num_heads, K = options_.head_dim;
  const auto gate = (options_.full_rank_output_gate ? g_proj(x) : g_b_proj(g_a_proj(x))).view({B, T, H, K});
  const auto y = o_norm(o.to(x.scalar_type()), gate);  // (B, T, H, V)
  return o_proj(y.reshape({B, T, H * K}));              // (B, T, D)
}

torch::Tensor KdaLayerImpl::forward(const torch::Tensor& x) {
  const auto p = project(x, nullptr);
  const auto r = kda_chunkwise_op(p.q, p.k, p.v, p.g, p.beta, std::nullopt, options_.chunk_size);
  return output(x, r.output);
}

torch::Tensor KdaLayerImpl::forward_with_state(const torch::Tensor& x, KdaLayerState& state) {
  if (!state.defined()) {
    if (!x.defined() || x.dim() != 3) throw std::invalid_argument("KdaLayer: input must be (B, T, D)");
    state = initial_state(x.size(0), x.options());
  }
  const auto p = project(x, &state);
  KdaResult r;
  if (x.size(1) == 1) {
    r = kda_decode_op(p.q.select(1, 0), p.k.select(1, 0), p.v.select(1, 0), p.g.select(1, 0),
                      p.beta.select(1, 0), state.recurrent);
    r.output = r.output.unsqueeze(1);  // (B, 1, H, V)
  } else {
    r = kda_chunkwise_op(p.q, p.k, p.v, p.g, p.beta, state.recurrent, options_.chunk_size);
  }
  state.recurrent = r.final_state;
  return output(x, r.output);
}

}  // namespace k3lab::models
