#include <k3lab/models/mx_format.hpp>

#include <stdexcept>

namespace k3lab::models {

MxElementFormat mx_element_format(MxElement element) {
  switch (element) {
    case MxElement::Fp4E2M1: return {1, 0, 2, 6.0};
    case MxElement::Fp8E4M3: return {3, -6, 8, 448.0};
    case MxElement::Fp8E5M2: return {2, -14, 15, 57344.0};
    case MxElement::None: break;
  }
  throw std::invalid_argument("MX element format 'none' has no element encoding");
}

std::string to_string(MxElement element) {
  switch (element) {
    case MxElement::None: return "none";
    case MxElement::Fp4E2M1: return "mxfp4";
    case MxElement::Fp8E4M3: return "mxfp8_e4m3";
    case MxElement::Fp8E5M2: return "mxfp8_e5m2";
  }
  return "unknown";
}

MxElement mx_element_from_string(const std::string& name) {
  for (auto e : {MxElement::None, MxElement::Fp4E2M1, MxElement::Fp8E4M3, MxElement::Fp8E5M2}) {
    if (name == to_string(e)) return e;
  }
  throw std::invalid_argument("unknown MX element format '" + name +
                              "': use one of none, mxfp4, mxfp8_e4m3, mxfp8_e5m2");
}

}  // namespace k3lab::models
