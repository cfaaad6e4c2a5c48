#pragma once
// Fake quantisation for quantisation-aware training (reference/mechanisms.md section 4).
//
// FakeQuantizer is the hook the feed-forward calls on its weights and on the activations entering
// its matmuls. MxFakeQuantizer implements OCP Microscaling (MX v1.0): blocks of 32 consecutive
// elements along the last (reduction) dimension share one power-of-two E8M0 scale
//     shared_exp = floor(log2(max |v|)) - emax_elem      clamped to [-127, 127]
// and each element v / 2^shared_exp is rounded to the element format with round-to-nearest-even,
// saturating at the largest normal (the spec's FLOOR scale rule; values in (6X, 8X) clip to 6X for
// FP4). The backward pass is the straight-through estimator: d out / d in = identity.
#include <k3lab/models/mx_format.hpp>

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <string>

namespace k3lab::models {

// Element quantisation only (no scale): rounds to the nearest representable value, ties to even,
// saturating at +-max normal. No gradient (use mx_fake_quantize for training).
torch::Tensor quantize_to_element(const torch::Tensor& x, MxElement element);

// Forward: MX quantise-dequantise along the last dimension, whose size must be a multiple of
// block_size. Backward: straight-through. MxElement::None returns x unchanged.
torch::Tensor mx_fake_quantize(const torch::Tensor& x, MxElement element,
                               std::int64_t block_size = 32);

class FakeQuantizer {
 public:
  virtual ~FakeQuantizer() = default;
  // w: (out, in), quantised along `in`.
  virtual torch::Tensor quantize_weight(const torch::Tensor& w) const = 0;
  // x: (..., in), quantised along `in`.
  virtual torch::Tensor quantize_activation(const torch::Tensor& x) const = 0;
  virtual std::string name() const = 0;
};

// Kimi K3's QAT recipe for routed experts is weights MXFP4 and input activations MXFP8 (E4M3).
class MxFakeQuantizer final : public FakeQuantizer {
 public:
  MxFakeQuantizer(MxElement weights, MxElement activations, std::int64_t block_size = 32);
  torch::Tensor quantize_weight(const torch::Tensor& w) const override;
  torch::Tensor quantize_activation(const torch::Tensor& x) const override;
  std::string name() const override;

  MxElement weights() const { return weights_; }
  MxElement activations() const { return activations_; }
  std::int64_t block_size() const { return block_size_; }

 private:
  MxElement weights_;
  MxElement activations_;
  std::int64_t block_size_;
};

}  // namespace k3lab::models
