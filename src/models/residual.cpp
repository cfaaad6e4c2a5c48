#include <k3lab/models/residual.hpp>

#include <torch/torch.h>

#include <stdexcept>

namespace k3lab::models {

namespace {

class StandardStream final : public ResidualStream {
 public:
  explicit StandardStream(torch::Tensor embedding) : h_(std::move(embedding)) {}
  torch::Tensor input(std::int64_t) override { return h_; }
  void add(std::int64_t, const torch::Tensor& output) override { h_ = h_ + output; }
  torch::Tensor output() override { return h_; }

 private:
  torch::Tensor h_;  // (B, T, D)
};

}  // namespace

std::unique_ptr<ResidualStream> StandardResidualImpl::start(const torch::Tensor& embedding) {
  return std::make_unique<StandardStream>(embedding);
}

std::shared_ptr<ResidualPathImpl> make_residual_path(const ModelConfig& config) {
  switch (config.residual.mode) {
    case ResidualMode::Standard: return std::make_shared<StandardResidualImpl>();
  }
  throw std::invalid_argument("model.residual.mode: unsupported residual mode");
}

}  // namespace k3lab::models
