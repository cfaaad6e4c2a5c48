#include <k3lab/models/rms_norm.hpp>

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace k3lab::models {

namespace {

void check_dim(const char* where, std::int64_t dim, double eps) {
  if (dim <= 0) throw std::invalid_argument(std::string(where) + ": dim must be positive");
  if (!(eps > 0.0)) throw std::invalid_argument(std::string(where) + ": eps must be > 0");
}

void check_input(const char* where, const torch::Tensor& x, std::int64_t dim) {
  if (!x.defined() || x.dim() == 0 || x.size(-1) != dim) {
    throw std::invalid_argument(std::string(where) + ": expected last dimension " +
                                std::to_string(dim));
  }
}

}  // namespace

torch::Tensor rms_normalize(const torch::Tensor& x, double eps) {
  const auto cdt = x.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const auto xc = x.to(cdt);
  return (xc * torch::rsqrt(xc.pow(2).mean(-1, /*keepdim=*/true) + eps)).to(x.scalar_type());
}

RMSNormImpl::RMSNormImpl(std::int64_t dim_, double eps_) : dim(dim_), eps(eps_) {
  check_dim("RMSNorm", dim, eps);
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor& x) {
  check_input("RMSNorm", x, dim);
  return rms_normalize(x, eps) * weight;
}

GatedRMSNormImpl::GatedRMSNormImpl(std::int64_t dim_, double eps_) : dim(dim_), eps(eps_) {
  check_dim("GatedRMSNorm", dim, eps);
  weight = register_parameter("weight", torch::ones({dim}));
}

torch::Tensor GatedRMSNormImpl::forward(const torch::Tensor& x, const torch::Tensor& gate) {
  check_input("GatedRMSNorm", x, dim);
  if (!gate.defined() || gate.sizes() != x.sizes()) {
    throw std::invalid_argument("GatedRMSNorm: gate must have the input's shape");
  }
  return rms_normalize(x, eps) * weight * torch::sigmoid(gate);
}

}  // namespace k3lab::models
