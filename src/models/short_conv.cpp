#include <k3lab/models/short_conv.hpp>

#include <torch/torch.h>

#include <sstream>
#include <stdexcept>

namespace k3lab::models {

ShortConvImpl::ShortConvImpl(std::int64_t channels_, std::int64_t kernel_size_)
    : channels(channels_), kernel_size(kernel_size_) {
  if (channels <= 0 || kernel_size <= 0) {
    throw std::invalid_argument("ShortConv: channels and kernel_size must be positive");
  }
  weight = register_parameter("weight", torch::zeros({channels, kernel_size}));
}

torch::Tensor ShortConvImpl::empty_cache(std::int64_t batch, const torch::TensorOptions& options) const {
  return torch::zeros({batch, kernel_size - 1, channels}, options);
}

torch::Tensor ShortConvImpl::forward(const torch::Tensor& x) {
  torch::Tensor cache;
  return forward_with_cache(x, cache);
}

torch::Tensor ShortConvImpl::forward_with_cache(const torch::Tensor& x, torch::Tensor& cache) {
  if (!x.defined() || x.dim() != 3 || x.size(2) != channels) {
    std::ostringstream msg;
    msg << "ShortConv: input must be (B, T, " << channels << "), got "
        << (x.defined() ? x.sizes() : at::IntArrayRef{});
    throw std::invalid_argument(msg.str());
  }
  const std::int64_t B = x.size(0);
  if (!cache.defined()) cache = empty_cache(B, x.options());
  if (cache.dim() != 3 || cache.size(0) != B || cache.size(1) != kernel_size - 1 ||
      cache.size(2) != channels) {
    throw std::invalid_argument("ShortConv: cache must be (B, kernel_size - 1, channels); create it "
                                "with empty_cache()");
  }
  const std::int64_t T = x.size(1);
  const auto window = torch::cat({cache.to(x.scalar_type()), x}, 1);  // (B, W - 1 + T, C)
  // A sum of shifted products, not a depthwise conv1d: oneDNN's depthwise backward ran 4x slower
  // on two threads than on one (docs/benchmarks.md, issue 19).
  auto y = window.narrow(1, 0, T) * weight.select(1, 0);               // (B, T, C)
  for (std::int64_t i = 1; i < kernel_size; ++i) {
    y = torch::addcmul(y, window.narrow(1, i, T), weight.select(1, i));  // (B, T, C)
  }
  cache = window.narrow(1, window.size(1) - (kernel_size - 1), kernel_size - 1);
  return torch::silu(y);                                               // (B, T, C)
}

}  // namespace k3lab::models
