#pragma once
// SiTU-GLU pointwise math in fp32, shared by the CUDA kernels and the host emulation-free checks.
#include <cmath>

#include "kernel_body.hpp"

namespace k3lab::kernels::detail {

struct SituValue {
  float value;
  float d_gate;  // d value / d gate
  float d_up;    // d value / d up
};

K3LAB_KERNEL_BODY float situ_glu_value(float gate, float up, float beta_gate, float beta_up) {
  const float sig = 1.0f / (1.0f + expf(-gate));
  return beta_gate * tanhf(gate / beta_gate) * sig * (beta_up * tanhf(up / beta_up));
}

K3LAB_KERNEL_BODY SituValue situ_glu_with_grads(float gate, float up, float beta_gate,
                                                float beta_up) {
  const float tg = tanhf(gate / beta_gate);
  const float sig = 1.0f / (1.0f + expf(-gate));
  const float tu = tanhf(up / beta_up);
  const float gate_factor = beta_gate * tg * sig;
  const float up_factor = beta_up * tu;
  const float d_gate_factor = (1.0f - tg * tg) * sig + gate_factor * (1.0f - sig);
  return {gate_factor * up_factor, d_gate_factor * up_factor, gate_factor * (1.0f - tu * tu)};
}

}  // namespace k3lab::kernels::detail
