#pragma once
// Tensors filled from k3lab's own generator (DESIGN.md section 5), so that test inputs, benchmark
// inputs and parameter initialisation are identical across LibTorch versions and machines.
#include <k3lab/core/rng.hpp>
#include <torch/types.h>

namespace k3lab::models {

// Values are drawn in row-major order on the CPU in float64, then cast to `dtype`.
torch::Tensor normal_tensor(at::IntArrayRef shape, core::Rng& rng, double mean = 0.0,
                            double stddev = 1.0, torch::ScalarType dtype = torch::kFloat);

torch::Tensor uniform_tensor(at::IntArrayRef shape, core::Rng& rng, double low = 0.0,
                             double high = 1.0, torch::ScalarType dtype = torch::kFloat);

}  // namespace k3lab::models
