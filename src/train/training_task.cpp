#include "k3lab/train/training_task.hpp"

#include <torch/torch.h>

namespace k3lab::train {

torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                              targets.reshape({-1}));
}

torch::Tensor token_tensor(const std::vector<std::int64_t>& values, std::int64_t rows, std::int64_t cols,
                           const torch::Device& device) {
  // The copy keeps the tensor independent of `values`.
  return torch::from_blob(const_cast<std::int64_t*>(values.data()), {rows, cols}, torch::kInt64).clone().to(device);
}

}  // namespace k3lab::train
