#pragma once
// OCP Microscaling element formats (reference/mechanisms.md section 4.1). Torch-free, so configs can
// name them without pulling in LibTorch.
#include <string>

namespace k3lab::models {

enum class MxElement {
  None,     // no quantisation
  Fp4E2M1,  // MXFP4: magnitudes {0, 0.5, 1, 1.5, 2, 3, 4, 6}
  Fp8E4M3,  // MXFP8 (OCP "fn"): max 448
  Fp8E5M2,  // MXFP8: max 57344
};

struct MxElementFormat {
  int mantissa_bits;
  int min_exponent;  // exponent of the smallest normal (1 - bias)
  int max_exponent;  // emax_elem: exponent of the largest normal
  double max_normal;
};

// Throws std::invalid_argument for MxElement::None.
MxElementFormat mx_element_format(MxElement element);

std::string to_string(MxElement element);  // "none", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2"
MxElement mx_element_from_string(const std::string& name);

}  // namespace k3lab::models
