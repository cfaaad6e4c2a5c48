#pragma once
// The depth (residual) path of the decoder, kept separate from the blocks so that Attention
// Residuals (reference/mechanisms.md section 1) can be added as another ResidualMode.
//
// Sublayers are numbered 0 .. 2L-1 in execution order (mixer of block 0, feed-forward of block 0,
// mixer of block 1, ...). For one forward pass the model asks a ResidualStream what each sublayer
// reads, hands it each sublayer's output, and finally asks what the final norm reads:
//     stream = path->start(embedding)
//     for s: y = sublayer_s(norm_s(stream->input(s))); stream->add(s, y)
//     h = stream->output()
// Standard keeps one running sum. AttnRes would keep the embedding and (block) sums as sources and
// mix them with learned pseudo-queries, so its parameters live in the ResidualPath module.
#include <k3lab/models/model_config.hpp>

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>

namespace k3lab::models {

class ResidualStream {
 public:
  virtual ~ResidualStream() = default;
  virtual torch::Tensor input(std::int64_t sublayer) = 0;                      // (B, T, D)
  virtual void add(std::int64_t sublayer, const torch::Tensor& output) = 0;     // (B, T, D)
  virtual torch::Tensor output() = 0;                                          // (B, T, D)
};

class ResidualPathImpl : public torch::nn::Module {
 public:
  virtual std::unique_ptr<ResidualStream> start(const torch::Tensor& embedding) = 0;
  virtual ResidualMode mode() const = 0;
};

// h_{s+1} = h_s + f_s(norm(h_s)).
class StandardResidualImpl final : public ResidualPathImpl {
 public:
  std::unique_ptr<ResidualStream> start(const torch::Tensor& embedding) override;
  ResidualMode mode() const override { return ResidualMode::Standard; }
};

std::shared_ptr<ResidualPathImpl> make_residual_path(const ModelConfig& config);

}  // namespace k3lab::models
