#pragma once
// Gated feed-forward: down( act(gate(x), up(x)) ), with act SwiGLU or SiTU-GLU, no biases, and an
// optional fake-quantisation hook on the three weights and on the activations entering the
// matmuls (x before gate/up, the hidden before down).
#include <k3lab/models/fake_quant.hpp>
#include <k3lab/models/model_config.hpp>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <memory>
#include <string>

namespace k3lab::models {

struct FeedForwardOptions {
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  FfnKind kind = FfnKind::SwiGlu;
  double situ_beta_gate = 4.0;  // b1 (K3: 4)
  double situ_beta_up = 25.0;   // b2 (K3: 25)
};

class FeedForwardImpl : public torch::nn::Module {
 public:
  explicit FeedForwardImpl(const FeedForwardOptions& options);

  torch::Tensor forward(const torch::Tensor& x);  // (..., D) -> (..., D)

  // nullptr removes the hook. MX quantisers need hidden_size and intermediate_size divisible by
  // their block size; this is checked here.
  void set_fake_quantizer(std::shared_ptr<const FakeQuantizer> quantizer);
  const std::shared_ptr<const FakeQuantizer>& fake_quantizer() const { return quantizer_; }

  const FeedForwardOptions& options() const { return options_; }

  torch::nn::Linear gate_proj{nullptr}, up_proj{nullptr}, down_proj{nullptr};

 private:
  torch::Tensor project(const torch::nn::Linear& layer, const torch::Tensor& x) const;
  FeedForwardOptions options_;
  std::shared_ptr<const FakeQuantizer> quantizer_;
};
TORCH_MODULE(FeedForward);

}  // namespace k3lab::models
