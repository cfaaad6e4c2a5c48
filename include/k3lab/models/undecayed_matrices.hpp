#pragma once
// A module whose 2-D parameters are stacks of per-position vectors (gains, pseudo-queries), not weight
// matrices. Weight decay applies to weight matrices only (train/optimizer.hpp); the shape rule
// "dim >= 2" cannot tell these apart, so such a module lists them here and the optimizer leaves them
// undecayed.
#include <vector>

#include <torch/types.h>

namespace k3lab::models {

class UndecayedMatrices {
 public:
  virtual ~UndecayedMatrices() = default;
  virtual std::vector<torch::Tensor> undecayed_matrices() const = 0;
};

}  // namespace k3lab::models
