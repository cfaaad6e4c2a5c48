#pragma once
// RMSNorm and fla's gated RMSNorm (FusedRMSNormGated with sigmoid activation).
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace k3lab::models {

// y = x / sqrt(mean(x^2) + eps) * weight over the last dimension; statistics in float32.
class RMSNormImpl : public torch::nn::Module {
 public:
  RMSNormImpl(std::int64_t dim, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x);  // (..., dim) -> (..., dim)

  torch::Tensor weight;  // (dim), initialised to 1
  std::int64_t dim;
  double eps;
};
TORCH_MODULE(RMSNorm);

// y = RMSNorm(x) * weight * sigmoid(gate), normalising the last dimension (one KDA head).
class GatedRMSNormImpl : public torch::nn::Module {
 public:
  GatedRMSNormImpl(std::int64_t dim, double eps = 1e-5);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& gate);  // (..., dim) x2

  torch::Tensor weight;  // (dim)
  std::int64_t dim;
  double eps;
};
TORCH_MODULE(GatedRMSNorm);

// The normalisation both modules share: x / sqrt(mean(x^2) + eps), in float32 (float64 stays).
torch::Tensor rms_normalize(const torch::Tensor& x, double eps);

}  // namespace k3lab::models
