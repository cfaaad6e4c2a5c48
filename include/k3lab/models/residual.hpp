#pragma once
// The depth (residual) path of the decoder, kept separate from the blocks.
//
// Sublayers are numbered 0 .. 2L-1 in execution order (mixer of block 0, feed-forward of block 0,
// mixer of block 1, ...). For one forward pass the model asks a ResidualStream what each sublayer
// reads, hands it each sublayer's output, and finally asks what the final norm reads:
//     stream = path->start(embedding)
//     for s: y = sublayer_s(norm_s(stream->input(s))); stream->add(s, y)
//     h = stream->output()
// The stream is per token along depth only, so the same path serves training, prefill and decode.
#include <k3lab/models/model_config.hpp>
#include <k3lab/models/undecayed_matrices.hpp>

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace k3lab::models {

class ResidualStream {
 public:
  virtual ~ResidualStream() = default;
  virtual torch::Tensor input(std::int64_t sublayer) = 0;                   // (B, T, D)
  virtual void add(std::int64_t sublayer, const torch::Tensor& output) = 0;  // (B, T, D)
  virtual torch::Tensor output() = 0;                                       // (B, T, D)
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

// Attention Residuals (arXiv 2603.15031; reference/mechanisms.md section 1). Consumer c (sublayer
// c, or the final norm as c = 2L) mixes its sources v_i with
//     alpha_i = softmax_i( w_c . (gain_c * RMSNorm(v_i)) ),   h = sum_i alpha_i v_i
// where w_c is a learned pseudo-query (zero at init: a uniform average) and gain_c the key norm's
// gain (one at init). The values are the raw sources; only the keys are normalised.
//   Full:  sources = embedding and every earlier sublayer output.
//   Block: sources = embedding, the sums of completed blocks of `block_size` decoder layers, and the
//          running sum of the current block (the Kimi K3 code: a block is sealed when a decoder
//          layer index is a multiple of block_size, just before that layer's mixer runs).
class AttnResidualImpl final : public ResidualPathImpl, public UndecayedMatrices {
 public:
  AttnResidualImpl(ResidualMode mode, std::int64_t num_layers, std::int64_t hidden_size,
                   std::int64_t block_size, double eps = 1e-6);
  std::unique_ptr<ResidualStream> start(const torch::Tensor& embedding) override;
  ResidualMode mode() const override { return mode_; }

  // Depth attention of consumer `consumer` over `sources` (each (B, T, D)); softmax in float32.
  torch::Tensor mix(const std::vector<torch::Tensor>& sources, std::int64_t consumer) const;

  std::int64_t num_layers() const { return num_layers_; }
  std::int64_t block_size() const { return block_size_; }

  // One pseudo-query and one key gain per consumer: vectors, never weight-decayed.
  std::vector<torch::Tensor> undecayed_matrices() const override { return {queries, key_gains}; }

  torch::Tensor queries;    // (2L + 1, D), initialised to 0
  torch::Tensor key_gains;  // (2L + 1, D), initialised to 1

 private:
  ResidualMode mode_;
  std::int64_t num_layers_;
  std::int64_t block_size_;
  double eps_;
};

std::shared_ptr<ResidualPathImpl> make_residual_path(const ModelConfig& config);

}  // namespace k3lab::models
