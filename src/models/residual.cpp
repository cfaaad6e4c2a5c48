#include <k3lab/models/residual.hpp>

#include <k3lab/models/depth_mix.hpp>

#include <torch/torch.h>

#include <stdexcept>
#include <string>

namespace k3lab::models {

namespace {

torch::Tensor plus(const torch::Tensor& sum, const torch::Tensor& term) {
  return sum.defined() ? sum + term : term;
}

class StandardStream final : public ResidualStream {
 public:
  explicit StandardStream(torch::Tensor embedding) : h_(std::move(embedding)) {}
  torch::Tensor input(std::int64_t) override { return h_; }
  void add(std::int64_t, const torch::Tensor& output) override { h_ = h_ + output; }
  torch::Tensor output() override { return h_; }

 private:
  torch::Tensor h_;  // (B, T, D)
};

class FullAttnResStream final : public ResidualStream {
 public:
  FullAttnResStream(const AttnResidualImpl& path, const torch::Tensor& embedding) : path_(path), sources_{embedding} {}
  torch::Tensor input(std::int64_t sublayer) override { return path_.mix(sources_, sublayer); }
  void add(std::int64_t, const torch::Tensor& output) override { sources_.push_back(output); }
  torch::Tensor output() override { return path_.mix(sources_, 2 * path_.num_layers()); }

 private:
  const AttnResidualImpl& path_;
  std::vector<torch::Tensor> sources_;  // embedding, f_0, f_1, ...
};

class BlockAttnResStream final : public ResidualStream {
 public:
  BlockAttnResStream(const AttnResidualImpl& path, const torch::Tensor& embedding) : path_(path), partial_(embedding) {}

  torch::Tensor input(std::int64_t sublayer) override {
    const auto h = path_.mix(sources(), sublayer);
    const bool mixer = sublayer % 2 == 0;
    if (mixer && (sublayer / 2) % path_.block_size() == 0) {
      blocks_.push_back(partial_);  // seal: the embedding at layer 0, then each block's sum
      partial_ = torch::Tensor();
    }
    return h;
  }
  void add(std::int64_t, const torch::Tensor& output) override { partial_ = plus(partial_, output); }
  torch::Tensor output() override { return path_.mix(sources(), 2 * path_.num_layers()); }

 private:
  std::vector<torch::Tensor> sources() const {
    auto all = blocks_;
    if (partial_.defined()) all.push_back(partial_);
    return all;
  }

  const AttnResidualImpl& path_;
  std::vector<torch::Tensor> blocks_;  // b_0 = embedding, b_1, ... (completed)
  torch::Tensor partial_;              // running sum of the current block
};

}  // namespace

std::unique_ptr<ResidualStream> StandardResidualImpl::start(const torch::Tensor& embedding) {
  return std::make_unique<StandardStream>(embedding);
}

AttnResidualImpl::AttnResidualImpl(ResidualMode mode, std::int64_t num_layers, std::int64_t hidden_size,
                                   std::int64_t block_size, double eps)
    : mode_(mode), num_layers_(num_layers), block_size_(block_size), eps_(eps) {
  if (mode != ResidualMode::FullAttnRes && mode != ResidualMode::BlockAttnRes) {
    throw std::invalid_argument("AttnResidual: mode must be full_attn_res or block_attn_res");
  }
  if (num_layers <= 0 || hidden_size <= 0 || block_size <= 0 || !(eps > 0.0)) {
    throw std::invalid_argument("AttnResidual: num_layers, hidden_size, block_size and eps must be positive");
  }
  queries = register_parameter("queries", torch::zeros({2 * num_layers + 1, hidden_size}));
  key_gains = register_parameter("key_gains", torch::ones({2 * num_layers + 1, hidden_size}));
}

torch::Tensor AttnResidualImpl::mix(const std::vector<torch::Tensor>& sources, std::int64_t consumer) const {
  if (sources.empty()) throw std::logic_error("AttnResidual: no sources to mix");
  if (consumer < 0 || consumer > 2 * num_layers_) {
    throw std::invalid_argument("AttnResidual: consumer " + std::to_string(consumer) + " out of range");
  }
  return depth_mix(sources, queries[consumer], key_gains[consumer], eps_);  // (B, T, D)
}

std::unique_ptr<ResidualStream> AttnResidualImpl::start(const torch::Tensor& embedding) {
  if (mode_ == ResidualMode::FullAttnRes) return std::make_unique<FullAttnResStream>(*this, embedding);
  return std::make_unique<BlockAttnResStream>(*this, embedding);
}

std::shared_ptr<ResidualPathImpl> make_residual_path(const ModelConfig& config) {
  switch (config.residual.mode) {
    case ResidualMode::Standard: return std::make_shared<StandardResidualImpl>();
    case ResidualMode::FullAttnRes:
    case ResidualMode::BlockAttnRes:
      return std::make_shared<AttnResidualImpl>(config.residual.mode, config.num_layers(), config.hidden_size,
                                                config.residual.block_size);
  }
  throw std::invalid_argument("model.residual.mode: unsupported residual mode");
}

}  // namespace k3lab::models
