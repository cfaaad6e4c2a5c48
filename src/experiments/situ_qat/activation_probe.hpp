#pragma once
// The per-checkpoint activation measurement of situ-qat, on one fixed validation sample (the first
// activation_histograms.sample_tokens validation tokens, whole windows of sequence_length), the same
// for every arm, seed and checkpoint. One forward of the trained model (quantizer on, as trained)
// records, in every layer, the FFN input x = ffn_norm(h) (B, T, D) and the FFN hidden product
// act(gate, up) (B, T, F), where act is SwiGLU or SiTU-GLU, before the down projection and before its
// MXFP8 quantisation. From them, pooled over every layer and token:
//   tails       p99 and p99.9 of |hidden| and of |x|, with LogHistograms of both; p99.9 and max per layer
//   error       relative RMS error (RelativeError) of the MX fake-quantized tensor against full precision:
//                 weights  gate, up and down weights of every layer, quantized with the weight format
//                 inputs   x, with the activation format
//                 hidden   the hidden product, with the activation format (the down projection's input)
//                 outputs  the FFN output as trained (every quantizer on) against the same FFN in full
//                          precision (no quantizer) on the same x
//   saturation  gate pre-activations z_g = q(x) q(W_g)^T with |tanh(z_g / beta1)| >= saturation_tanh_level,
//               up pre-activations z_u = q(x) q(W_u)^T with |tanh(z_u / beta2)| >= the level; the same
//               betas in the SwiGLU arm (where nothing is capped, so this only counts large values)
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "k3lab/models/decoder_lm.hpp"
#include "k3lab/train/dataset.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// Rows of sequence_length per recorded forward: as many as keep about 16384 tokens, at least 1.
std::int64_t probe_rows(std::int64_t sample_rows, std::int64_t sequence_length);

class ActivationProbe {
 public:
  // Throws std::invalid_argument when the sample is not whole windows or exceeds the validation text.
  ActivationProbe(const Parameters& p, const train::Dataset& data);
  // The measurement above as JSON. The model keeps its quantizers (restored even on error).
  nlohmann::json measure(models::DecoderLM& model, const torch::Device& device) const;
  std::int64_t sample_rows() const { return rows_; }

 private:
  Parameters p_;
  const train::Dataset& data_;
  std::int64_t rows_ = 0;
};

}  // namespace k3lab::experiments::situ_qat
