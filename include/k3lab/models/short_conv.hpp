#pragma once
// Short causal depthwise convolution with SiLU (fla ShortConvolution, kernel 4, no bias), applied
// to KDA's q, k and v projections. Its decode state is the last (kernel - 1) inputs per channel.
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace k3lab::models {

class ShortConvImpl : public torch::nn::Module {
 public:
  ShortConvImpl(std::int64_t channels, std::int64_t kernel_size = 4);

  // x (B, T, C) -> silu(causal_conv(x)) (B, T, C), as if preceded by zeros.
  torch::Tensor forward(const torch::Tensor& x);

  // Continues from `cache` (B, kernel - 1, C) holding the previous inputs (zeros at the start),
  // and replaces it with the last kernel - 1 inputs. Same result as forward() over the whole
  // sequence.
  torch::Tensor forward_with_cache(const torch::Tensor& x, torch::Tensor& cache);

  torch::Tensor empty_cache(std::int64_t batch, const torch::TensorOptions& options) const;

  torch::Tensor weight;  // (C, kernel): weight[c, kernel - 1] multiplies the current token
  std::int64_t channels;
  std::int64_t kernel_size;
};
TORCH_MODULE(ShortConv);

}  // namespace k3lab::models
