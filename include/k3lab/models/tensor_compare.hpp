#pragma once
// Error metrics between a reference tensor and a tensor under test, as fla's KDA tests define them
// (reference/kda.md section 3): err_ratio = RMSE(ref - test) / RMS(ref).
#include <torch/types.h>

#include <string>

namespace k3lab::models {

struct ErrorStats {
  double max_abs = 0.0;     // max |ref - test|
  double rmse = 0.0;        // sqrt(mean((ref - test)^2))
  double ref_rms = 0.0;     // sqrt(mean(ref^2))
  double rmse_ratio = 0.0;  // rmse / ref_rms (0 when both are 0, +inf when only ref_rms is 0)
  bool has_nan = false;     // either tensor holds a NaN or an Inf
};

// Compares in float64 on the CPU. Throws std::invalid_argument when the shapes differ.
ErrorStats compare_tensors(const torch::Tensor& reference, const torch::Tensor& test);

double rmse_ratio(const torch::Tensor& reference, const torch::Tensor& test);

// fla's pass rule: no NaN/Inf, and max|diff| <= 1e-6 or rmse_ratio < tolerance.
bool within_rmse_ratio(const ErrorStats& stats, double tolerance);

// One line for test failure messages and benchmark output.
std::string describe(const ErrorStats& stats);

}  // namespace k3lab::models
