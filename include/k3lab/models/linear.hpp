#pragma once
// The projections of every layer: torch::nn::Linear without a bias unless asked.
#include <torch/nn/modules/linear.h>

#include <cstdint>

namespace k3lab::models {

inline torch::nn::Linear projection(std::int64_t in, std::int64_t out, bool bias = false) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

}  // namespace k3lab::models
