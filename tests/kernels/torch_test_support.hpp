#pragma once
// Conversions between the tests' host vectors of doubles and LibTorch tensors.
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace k3lab::kernels::testing {

inline torch::Tensor tensor_of(const std::vector<double>& values, std::vector<std::int64_t> shape) {
  return torch::tensor(values, torch::kFloat64).reshape(shape);
}

// Any tensor (any device or dtype, with or without autograd history) as host doubles.
inline std::vector<double> values_of(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().to(torch::kFloat64).contiguous().cpu();
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace k3lab::kernels::testing
