#include <k3lab/models/random_tensor.hpp>

#include <torch/torch.h>

#include <stdexcept>

namespace k3lab::models {

namespace {

template <typename Draw>
torch::Tensor fill(at::IntArrayRef shape, torch::ScalarType dtype, Draw draw) {
  auto values = torch::empty(shape, torch::TensorOptions().dtype(torch::kDouble));
  double* data = values.data_ptr<double>();
  const std::int64_t n = values.numel();
  for (std::int64_t i = 0; i < n; ++i) data[i] = draw();
  return values.to(dtype);
}

}  // namespace

torch::Tensor normal_tensor(at::IntArrayRef shape, core::Rng& rng, double mean, double stddev,
                            torch::ScalarType dtype) {
  if (!(stddev >= 0.0)) throw std::invalid_argument("normal_tensor: stddev must be >= 0");
  return fill(shape, dtype, [&] { return rng.normal(mean, stddev); });
}

torch::Tensor uniform_tensor(at::IntArrayRef shape, core::Rng& rng, double low, double high,
                             torch::ScalarType dtype) {
  if (!(high >= low)) throw std::invalid_argument("uniform_tensor: high must be >= low");
  return fill(shape, dtype, [&] { return rng.uniform(low, high); });
}

}  // namespace k3lab::models
