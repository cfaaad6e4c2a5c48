#pragma once
// The model of each situ-qat arm: one shared shape (parameters.model), full causal attention in every
// layer, and the gated FFN the arm names, both under the one MX quantization block.
#include <string>

#include "k3lab/models/model_config.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// The protocol's quantization block as the models' QuantConfig. Throws std::invalid_argument when the
// protocol names a format or rounding models/fake_quant.hpp does not implement (it implements the
// OCP floor scale rule with round-to-nearest-even elements only), naming the field and the fix.
models::QuantConfig quant_config(const Quantization& q);

// Everything but the FFN kind is identical across arms: vocab, width, n_layers x "A" (full causal
// attention, n_heads x head_dim, RoPE 10000), ffn_hidden, tied embeddings, and the quantizer. The
// SwiGLU arm keeps the situ betas in its config (unused by SwiGLU) so that saturation is measured with
// the same betas in both arms, as the protocol asks.
models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm);

}  // namespace k3lab::experiments::situ_qat
