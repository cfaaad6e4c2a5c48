#include "situ_qat/arm_model.hpp"

#include <stdexcept>

#include "k3lab/experiments/training/dense_model.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

models::MxElement element(const std::string& format, const std::string& field) {
  if (format == "mxfp4-e2m1") return models::MxElement::Fp4E2M1;
  if (format == "mxfp8-e4m3") return models::MxElement::Fp8E4M3;
  if (format == "mxfp8-e5m2") return models::MxElement::Fp8E5M2;
  throw std::invalid_argument("situ-qat: parameters.quantization." + field + " \"" + format +
                              "\" is not implemented by models/fake_quant.hpp; use mxfp4-e2m1, mxfp8-e4m3 or mxfp8-e5m2");
}

}  // namespace

models::QuantConfig quant_config(const Quantization& q) {
  if (q.scale_rounding != "floor") {
    throw std::invalid_argument("situ-qat: parameters.quantization.scale_rounding \"" + q.scale_rounding +
                                "\" is not implemented: models/fake_quant.hpp implements the OCP floor rule only; "
                                "set it to \"floor\" or add the rule to MxFakeQuantizer first");
  }
  if (q.element_rounding != "nearest-even") {
    throw std::invalid_argument("situ-qat: parameters.quantization.element_rounding \"" + q.element_rounding +
                                "\" is not implemented: models/fake_quant.hpp rounds to nearest-even only; "
                                "set it to \"nearest-even\" or add the rounding to MxFakeQuantizer first");
  }
  models::QuantConfig c;
  c.weights = element(q.weight_format, "weight_format");
  c.activations = element(q.activation_format, "activation_format");
  c.block_size = q.block_size;
  return c;
}

models::ModelConfig arm_model_config(const Parameters& p, const std::string& arm) {
  if (arm != "swiglu" && arm != "situ-glu") {
    throw std::invalid_argument("situ-qat: unknown arm \"" + arm + "\"; the arms are swiglu and situ-glu");
  }
  auto c = training::dense_model_config(p.model);
  c.ffn.kind = arm == "situ-glu" ? models::FfnKind::SituGlu : models::FfnKind::SwiGlu;
  c.ffn.situ_beta_gate = p.beta1;
  c.ffn.situ_beta_up = p.beta2;
  c.ffn.quant = quant_config(p.quantization);
  c.validate();
  return c;
}

}  // namespace k3lab::experiments::situ_qat
