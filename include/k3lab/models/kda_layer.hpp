#pragma once
// The Kimi Delta Attention layer (reference/kda.md section 1.2, fla/layers/kda.py):
//   q, k = L2Norm(SiLU(ShortConv(W_q x))), L2Norm(SiLU(ShortConv(W_k x)))     per head, K = head_dim
//   v    = SiLU(ShortConv(W_v x))
//   g    = gate(f_b(f_a(x)))          K3: -5 * sigmoid(exp(A_log) (. + dt_bias)); else softplus gate
//   beta = sigmoid(b_proj(x))
//   o    = W_o ( GatedRMSNorm(KDA(q, k, v, g, beta), gate = g_proj(x)) )
// K3 uses a full-rank output gate g_proj (hidden -> H*V); Kimi Linear a low-rank one
// (hidden -> rank -> H*V, with a bias on the second projection as in fla).
// No GVA: v has as many heads as q and k, and V = K = head_dim.
#include <k3lab/models/rms_norm.hpp>
#include <k3lab/models/short_conv.hpp>

#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <optional>

namespace k3lab::models {

struct KdaLayerOptions {
  std::int64_t hidden_size = 0;
  std::int64_t num_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t conv_kernel = 4;
  std::optional<double> gate_lower_bound = -5.0;  // nullopt: Kimi Linear's softplus gate
  std::int64_t gate_rank = 0;                     // rank of f_a / g_a; 0 means head_dim
  bool full_rank_output_gate = true;              // K3: true
  double norm_eps = 1e-5;
  std::int64_t chunk_size = 64;
};

// Decode state of one KDA layer for a batch: a fixed size, whatever the sequence length.
struct KdaLayerState {
  torch::Tensor conv_q, conv_k, conv_v;  // (B, conv_kernel - 1, H * head_dim) each
  torch::Tensor recurrent;               // (B, H, K, V), float32 (float64 for float64 models)
  bool defined() const { return recurrent.defined(); }
  std::int64_t bytes() const;            // actual storage of the four tensors
};

class KdaLayerImpl : public torch::nn::Module {
 public:
  explicit KdaLayerImpl(const KdaLayerOptions& options);

  // Training / prefill from an empty state: x (B, T, D) -> (B, T, D), chunkwise form.
  torch::Tensor forward(const torch::Tensor& x);

  // Continues from `state` (empty states are created on first use) and updates it. T == 1 takes
  // the fixed-size decode step, longer inputs the chunkwise form with an initial state.
  torch::Tensor forward_with_state(const torch::Tensor& x, KdaLayerState& state);

  KdaLayerState initial_state(std::int64_t batch, const torch::TensorOptions& options) const;

  const KdaLayerOptions& options() const { return options_; }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr};
  ShortConv q_conv{nullptr}, k_conv{nullptr}, v_conv{nullptr};
  torch::nn::Linear f_a_proj{nullptr}, f_b_proj{nullptr};  // decay gate, low rank
  torch::nn::Linear b_proj{nullptr};                       // beta logits
  torch::nn::Linear g_proj{nullptr};                       // full-rank output gate
  torch::nn::Linear g_a_proj{nullptr}, g_b_proj{nullptr};  // low-rank output gate
  GatedRMSNorm o_norm{nullptr};
  torch::nn::Linear o_proj{nullptr};
  torch::Tensor A_log;    // (H), float32
  torch::Tensor dt_bias;  // (H * K), float32

 private:
  struct Projected {
    torch::Tensor q, k, v, g, beta;  // (B, T, H, K) x2, (B, T, H, V), (B, T, H, K), (B, T, H)
  };
  Projected project(const torch::Tensor& x, KdaLayerState* state);
  torch::Tensor output(const torch::Tensor& x, const torch::Tensor& o);  // o (B, T, H, V)

  KdaLayerOptions options_;
};
TORCH_MODULE(KdaLayer);

}  // namespace k3lab::models
