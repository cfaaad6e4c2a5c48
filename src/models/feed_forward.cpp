#include <k3lab/models/feed_forward.hpp>

#include <k3lab/models/activations.hpp>
#include <k3lab/models/linear.hpp>
#include <k3lab/models/situ_glu_ops.hpp>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace k3lab::models {

FeedForwardImpl::FeedForwardImpl(const FeedForwardOptions& options) : options_(options) {
  if (options_.hidden_size <= 0 || options_.intermediate_size <= 0) {
    throw std::invalid_argument("FeedForward: hidden_size and intermediate_size must be positive");
  }
  if (!(options_.situ_beta_gate > 0) || !(options_.situ_beta_up > 0) ||
      !std::isfinite(options_.situ_beta_gate) || !std::isfinite(options_.situ_beta_up)) {
    throw std::invalid_argument("FeedForward: situ_beta_gate and situ_beta_up must be finite and > 0");
  }
  gate_proj = register_module("gate_proj", projection(options_.hidden_size, options_.intermediate_size));
  up_proj = register_module("up_proj", projection(options_.hidden_size, options_.intermediate_size));
  down_proj = register_module("down_proj", projection(options_.intermediate_size, options_.hidden_size));
}

void FeedForwardImpl::set_fake_quantizer(std::shared_ptr<const FakeQuantizer> quantizer) {
  if (auto mx = std::dynamic_pointer_cast<const MxFakeQuantizer>(quantizer)) {
    const auto block = mx->block_size();
    if (options_.hidden_size % block != 0 || options_.intermediate_size % block != 0) {
      throw std::invalid_argument("FeedForward: MX fake quantisation needs hidden_size (" +
                                  std::to_string(options_.hidden_size) + ") and intermediate_size (" +
                                  std::to_string(options_.intermediate_size) +
                                  ") divisible by the block size " + std::to_string(block));
    }
  }
  quantizer_ = std::move(quantizer);
}

torch::Tensor FeedForwardImpl::project(const torch::nn::Linear& layer, const torch::Tensor& x) const {
  if (!quantizer_) return torch::linear(x, layer->weight);
  return torch::linear(quantizer_->quantize_activation(x), quantizer_->quantize_weight(layer->weight));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != options_.hidden_size) {
    throw std::invalid_argument("FeedForward: input must be (..., " + std::to_string(options_.hidden_size) + ")");
  }
  const auto gate = project(gate_proj, x);  // (..., F)
  const auto up = project(up_proj, x);      // (..., F)
  const auto hidden = options_.kind == FfnKind::SwiGlu
                          ? swiglu(gate, up)
                          : situ_glu_op(gate, up, options_.situ_beta_gate, options_.situ_beta_up);
  return project(down_proj, hidden);         // (..., D)
}

}  // namespace k3lab::models
