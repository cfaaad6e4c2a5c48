#include <k3lab/models/rope.hpp>

#include <torch/torch.h>

#include <stdexcept>

namespace k3lab::models {

torch::Tensor apply_rope(const torch::Tensor& x, std::int64_t start, double theta) {
  if (!x.defined() || x.dim() != 4 || x.size(-1) % 2 != 0) {
    throw std::invalid_argument("apply_rope: x must be (B, H, T, d) with an even d");
  }
  if (!(theta > 0.0)) throw std::invalid_argument("apply_rope: theta must be > 0");
  const std::int64_t T = x.size(2), half = x.size(3) / 2;
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble).device(x.device());
  const auto inv_freq = torch::pow(theta, torch::arange(0, half, f64) * (-2.0 / static_cast<double>(x.size(3))));
  const auto angles = torch::arange(start, start + T, f64).unsqueeze(1) * inv_freq.unsqueeze(0);  // (T, half)
  const auto cos = angles.cos().to(x.scalar_type());
  const auto sin = angles.sin().to(x.scalar_type());
  const auto x1 = x.narrow(-1, 0, half);
  const auto x2 = x.narrow(-1, half, half);
  return torch::cat({x1 * cos - x2 * sin, x1 * sin + x2 * cos}, -1);  // (B, H, T, d)
}

}  // namespace k3lab::models
