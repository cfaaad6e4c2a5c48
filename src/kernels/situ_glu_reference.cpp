#include "k3lab/kernels/situ_glu_reference.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::kernels {

SituGluPoint situ_glu_reference(double gate, double up, const SituGluBetas& betas) {
  const double b1 = betas.gate, b2 = betas.up;
  const double tg = std::tanh(gate / b1);
  const double sg = 1.0 / (1.0 + std::exp(-gate));
  const double tu = std::tanh(up / b2);
  const double gate_factor = b1 * tg * sg;
  const double up_factor = b2 * tu;
  const double d_gate_factor = (1.0 - tg * tg) * sg + b1 * tg * sg * (1.0 - sg);
  const double d_up_factor = 1.0 - tu * tu;
  return {gate_factor * up_factor, d_gate_factor * up_factor, gate_factor * d_up_factor};
}

std::vector<double> situ_glu_forward_reference(const std::vector<double>& gate,
                                               const std::vector<double>& up,
                                               const SituGluBetas& betas) {
  if (gate.size() != up.size()) {
    throw std::invalid_argument("situ_glu_forward_reference: gate has " +
                                std::to_string(gate.size()) + " values but up has " +
                                std::to_string(up.size()) + "; pass arrays of one shape");
  }
  std::vector<double> out(gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) out[i] = situ_glu_reference(gate[i], up[i], betas).value;
  return out;
}

void situ_glu_backward_reference(const std::vector<double>& gate, const std::vector<double>& up,
                                 const std::vector<double>& d_out, std::vector<double>& d_gate,
                                 std::vector<double>& d_up, const SituGluBetas& betas) {
  if (gate.size() != up.size() || gate.size() != d_out.size()) {
    throw std::invalid_argument(
        "situ_glu_backward_reference: gate, up and d_out must have the same number of values");
  }
  d_gate.resize(gate.size());
  d_up.resize(gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const SituGluPoint point = situ_glu_reference(gate[i], up[i], betas);
    d_gate[i] = d_out[i] * point.d_gate;
    d_up[i] = d_out[i] * point.d_up;
  }
}

}  // namespace k3lab::kernels
