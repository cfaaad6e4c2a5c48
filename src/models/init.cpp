#include <k3lab/models/init.hpp>

#include <k3lab/core/rng.hpp>
#include <k3lab/models/kda_layer.hpp>
#include <k3lab/models/random_tensor.hpp>
#include <k3lab/models/residual.hpp>
#include <k3lab/models/rms_norm.hpp>
#include <k3lab/models/short_conv.hpp>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::models {

namespace {

std::string leaf_name(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

class Initializer {
 public:
  Initializer(std::uint64_t seed, const InitOptions& options) : seed_(seed), options_(options) {
    if (!(options_.stddev > 0.0) || options_.num_layers <= 0) {
      throw std::invalid_argument("initialize_parameters: stddev and num_layers must be positive");
    }
  }

  void visit(torch::nn::Module& module, const std::string& path) {
    auto own = module.named_parameters(/*recurse=*/false);
    if (own.is_empty()) return;
    for (auto& item : own) {
      const std::string full = join(path, item.key());
      core::Rng rng(core::stream_seed(seed_, {core::fnv1a64(full)}));
      assign(item.value(), values_for(module, path, item.key(), item.value(), rng, full));
    }
  }

 private:
  torch::Tensor values_for(torch::nn::Module& module, const std::string& path, const std::string& name,
                           const torch::Tensor& p, core::Rng& rng, const std::string& full) {
    const auto shape = p.sizes();
    if (dynamic_cast<torch::nn::LinearImpl*>(&module)) {
      if (name == "bias") return torch::zeros(shape);
      const auto leaf = leaf_name(path);
      const bool output_projection = leaf == "o_proj" || leaf == "down_proj";
      const double stddev = output_projection
                                ? options_.stddev / std::sqrt(2.0 * static_cast<double>(options_.num_layers))
                                : options_.stddev;
      return normal_tensor(shape, rng, 0.0, stddev, torch::kDouble);
    }
    if (dynamic_cast<torch::nn::EmbeddingImpl*>(&module)) {
      return normal_tensor(shape, rng, 0.0, options_.stddev, torch::kDouble);
    }
    if (dynamic_cast<RMSNormImpl*>(&module) || dynamic_cast<GatedRMSNormImpl*>(&module)) {
      return torch::ones(shape);
    }
    if (auto* conv = dynamic_cast<ShortConvImpl*>(&module)) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(conv->kernel_size));
      return uniform_tensor(shape, rng, -bound, bound, torch::kDouble);
    }
    if (auto* kda = dynamic_cast<KdaLayerImpl*>(&module)) {
      if (name == "A_log") {
        if (kda->options().gate_lower_bound) return torch::zeros(shape);
        return uniform_tensor(shape, rng, 1.0, 16.0, torch::kDouble).log();
      }
      if (name == "dt_bias") {
        const auto dt = uniform_tensor(shape, rng, std::log(1e-3), std::log(1e-1), torch::kDouble).exp().clamp_min(1e-4);
        return dt + torch::log(-torch::expm1(-dt));  // inverse softplus
      }
    }
    if (dynamic_cast<AttnResidualImpl*>(&module)) {
      // Zero pseudo-queries: a uniform average over sources at step 0 (the AttnRes paper insists).
      if (name == "queries") return torch::zeros(shape);
      if (name == "key_gains") return torch::ones(shape);
    }
    throw std::invalid_argument("initialize_parameters: no initialisation rule for parameter '" + full +
                                "'; add one in src/models/init.cpp");
  }

  static void assign(torch::Tensor& p, const torch::Tensor& values) {
    torch::NoGradGuard no_grad;
    p.copy_(values.to(p.scalar_type()));
  }

  std::uint64_t seed_;
  InitOptions options_;
};

}  // namespace

void initialize_parameters(torch::nn::Module& root, std::uint64_t seed, const InitOptions& options) {
  Initializer init(seed, options);
  init.visit(root, "");
  // include_self = false: the root may still be under construction (no shared_ptr owns it yet).
  for (auto& item : root.named_modules("", /*include_self=*/false)) init.visit(*item.value(), item.key());
}

}  // namespace k3lab::models
