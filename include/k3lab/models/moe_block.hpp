#pragma once
// A top-k routed mixture-of-experts feed-forward with capacity dropping:
//   s = sigmoid(W_r x)                       (m, n) router scores
//   T_i = argtop_k(s_i + b)                  b: the correction bias (selection only, no gradient)
//   y_i = sum_{j in T_i, kept} w_ij E_j(x_i),   w_ij = s_ij / sum_{r in T_i} s_ir
//   E_j(x) = W_down,j (silu(W_gate,j x) * W_up,j x)   (a SwiGLU FeedForward of width expert_hidden)
// Capacity: each expert takes at most `capacity` token-expert assignments per forward, first come in
// token order (row-major over the batch); the rest are dropped: they add nothing, and the token keeps
// its residual stream (the block output is added to it by the caller). The routing control
// (router_control.hpp) decides the aux loss and how the bias moves after each update.
#include <cstdint>

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include "k3lab/models/router_control.hpp"

namespace k3lab::models {

struct MoeOptions {
  std::int64_t hidden_size = 0;
  int n_experts = 0;
  int top_k = 0;
  std::int64_t expert_hidden = 0;
  std::int64_t capacity = 0;  // assignments per expert per forward
  RouterControl control = RouterControl::None;
  double aux_coefficient = 0;
};

// What one forward routed, for measurements and the bias updates (all detached).
struct RoutingStats {
  torch::Tensor scores;   // (m, n) raw sigmoid scores
  torch::Tensor cutoff;   // (m) alpha_i of the biased selection
  torch::Tensor loads;    // (n) int64 on CPU: routes per expert before dropping
  std::int64_t dropped = 0;      // assignments over capacity
  std::int64_t assignments = 0;  // m * k
};

struct MoeOutput {
  torch::Tensor output;    // (B, T, D)
  torch::Tensor aux_loss;  // scalar; defined only for the aux-loss control
  RoutingStats stats;
};

// Which assignments fit: experts (m, k) -> (m, k) bool, true where the assignment is within its
// expert's first `capacity` in row-major order.
torch::Tensor within_capacity(const torch::Tensor& experts, int n_experts, std::int64_t capacity);

class MoeBlockImpl : public torch::nn::Module {
 public:
  explicit MoeBlockImpl(const MoeOptions& options);
  MoeOutput forward(const torch::Tensor& x);  // x (B, T, D), normed

  // After the optimizer update: fixed step or Quantile Balancing from the last forward's stats.
  void update_bias(const RoutingStats& stats, double fixed_step);

  const MoeOptions& options() const { return options_; }
  torch::nn::Linear router{nullptr};
  torch::nn::ModuleList experts{nullptr};  // FeedForward (SwiGLU) each
  torch::Tensor correction_bias;           // (n) float32 buffer; stays 0 without a bias control

 private:
  MoeOptions options_;
};
TORCH_MODULE(MoeBlock);

}  // namespace k3lab::models
