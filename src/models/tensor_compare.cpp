#include <k3lab/models/tensor_compare.hpp>

#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace k3lab::models {

ErrorStats compare_tensors(const torch::Tensor& reference, const torch::Tensor& test) {
  if (!reference.defined() || !test.defined()) {
    throw std::invalid_argument("compare_tensors: both tensors must be defined");
  }
  if (reference.sizes() != test.sizes()) {
    std::ostringstream msg;
    msg << "compare_tensors: shape mismatch, reference " << reference.sizes() << " vs test "
        << test.sizes();
    throw std::invalid_argument(msg.str());
  }
  const auto ref = reference.detach().to(torch::kCPU, torch::kDouble);
  const auto tst = test.detach().to(torch::kCPU, torch::kDouble);
  ErrorStats stats;
  stats.has_nan = !torch::isfinite(ref).all().item<bool>() || !torch::isfinite(tst).all().item<bool>();
  if (ref.numel() == 0) return stats;
  const auto diff = ref - tst;
  stats.max_abs = diff.abs().max().item<double>();
  stats.rmse = diff.pow(2).mean().sqrt().item<double>();
  stats.ref_rms = ref.pow(2).mean().sqrt().item<double>();
  if (stats.ref_rms > 0.0) {
    stats.rmse_ratio = stats.rmse / stats.ref_rms;
  } else {
    stats.rmse_ratio = stats.rmse == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  }
  return stats;
}

double rmse_ratio(const torch::Tensor& reference, const torch::Tensor& test) {
  return compare_tensors(reference, test).rmse_ratio;
}

bool within_rmse_ratio(const ErrorStats& stats, double tolerance) {
  if (stats.has_nan || std::isnan(stats.rmse_ratio)) return false;
  return stats.max_abs <= 1e-6 || stats.rmse_ratio < tolerance;
}

std::string describe(const ErrorStats& stats) {
  std::ostringstream out;
  out << "max_abs=" << stats.max_abs << " rmse=" << stats.rmse << " ref_rms=" << stats.ref_rms
      << " rmse_ratio=" << stats.rmse_ratio << (stats.has_nan ? " NaN/Inf present" : "");
  return out.str();
}

}  // namespace k3lab::models
