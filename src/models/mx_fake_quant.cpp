#include <k3lab/models/fake_quant.hpp>

#include <k3lab/models/compute_dtype.hpp>

#include <torch/torch.h>

#include <limits>
#include <stdexcept>

namespace k3lab::models {

namespace {

// floor(log2 |x|) exactly, via frexp (|x| = m 2^e with m in [0.5, 1)); 0 maps to -1.
torch::Tensor floor_log2(const torch::Tensor& magnitude) {
  auto [mantissa, exponent] = torch::frexp(magnitude);
  return (exponent - 1).to(magnitude.scalar_type());
}

}  // namespace

torch::Tensor quantize_to_element(const torch::Tensor& x, MxElement element) {
  const auto fmt = mx_element_format(element);
  torch::NoGradGuard no_grad;
  const auto xc = x.to(compute_dtype(x));
  const auto magnitude = xc.abs();
  const auto exponent = floor_log2(magnitude).clamp_min(fmt.min_exponent);
  const auto step = torch::pow(2.0, exponent - fmt.mantissa_bits);  // spacing in this binade
  const auto rounded = (torch::round(magnitude / step) * step).clamp_max(fmt.max_normal);
  return (rounded * torch::sign(xc)).to(x.scalar_type());  // torch::round is ties-to-even
}

torch::Tensor mx_fake_quantize(const torch::Tensor& x, MxElement element, std::int64_t block_size) {
  if (element == MxElement::None) return x;
  if (!x.defined() || !x.is_floating_point() || x.dim() == 0) {
    throw std::invalid_argument("mx_fake_quantize: input must be a floating-point tensor with >= 1 dim");
  }
  if (block_size <= 0 || x.size(-1) % block_size != 0) {
    throw std::invalid_argument("mx_fake_quantize: the last dimension (" + std::to_string(x.size(-1)) +
                                ") must be a multiple of the MX block size (" +
                                std::to_string(block_size) +
                                "); choose widths divisible by 32 for MX quantisation");
  }
  const auto fmt = mx_element_format(element);
  torch::Tensor dequantized;
  {
    torch::NoGradGuard no_grad;
    const auto blocks = x.detach().to(compute_dtype(x)).reshape({-1, block_size});  // (n, 32)
    const auto amax = blocks.abs().amax(-1, /*keepdim=*/true);                      // (n, 1)
    const auto exponent = floor_log2(amax) - fmt.max_exponent;                      // (n, 1)
    // E8M0 holds 2^-127 .. 2^127 and NaN. As in the OCP MX reference, a block whose amax is Inf or NaN,
    // or needs a scale above 2^127 (float64 only), gets the NaN scale: the whole block decodes as NaN,
    // so saturation and error metrics over it read NaN instead of a silently clipped value. Below
    // 2^-127 the scale clamps and small values flush to zero, as the format does.
    const auto representable = torch::isfinite(amax) & (exponent <= 127);            // (n, 1)
    const auto scale = torch::where(representable, torch::pow(2.0, exponent.clamp(-127, 127)),
                                    torch::full_like(amax, std::numeric_limits<double>::quiet_NaN()));  // E8M0
    dequantized = (quantize_to_element(blocks / scale, element) * scale).reshape(x.sizes()).to(x.scalar_type());
  }
  // Straight-through: the value is exactly `dequantized`, the gradient is the identity.
  return dequantized + (x - x.detach());
}

MxFakeQuantizer::MxFakeQuantizer(MxElement weights, MxElement activations, std::int64_t block_size)
    : weights_(weights), activations_(activations), block_size_(block_size) {
  if (block_size <= 0) throw std::invalid_argument("MxFakeQuantizer: block_size must be positive");
}

torch::Tensor MxFakeQuantizer::quantize_weight(const torch::Tensor& w) const {
  return mx_fake_quantize(w, weights_, block_size_);
}

torch::Tensor MxFakeQuantizer::quantize_activation(const torch::Tensor& x) const {
  return mx_fake_quantize(x, activations_, block_size_);
}

std::string MxFakeQuantizer::name() const {
  return "mx(weights=" + to_string(weights_) + ", activations=" + to_string(activations_) +
         ", block=" + std::to_string(block_size_) + ")";
}

}  // namespace k3lab::models
