#pragma once
// Host reference for SiTU-GLU in double: the value and its two partial derivatives.
#include <vector>

#include "k3lab/kernels/situ_glu.hpp"

namespace k3lab::kernels {

struct SituGluPoint {
  double value = 0.0;
  double d_gate = 0.0;  // d value / d gate
  double d_up = 0.0;    // d value / d up
};

// Derivatives in closed form:
//   gate factor a(z) = b1 tanh(z/b1) s(z):  a'(z) = (1 - tanh^2(z/b1)) s(z) + b1 tanh(z/b1) s(z)(1 - s(z))
//   up factor   c(u) = b2 tanh(u/b2):       c'(u) = 1 - tanh^2(u/b2)
SituGluPoint situ_glu_reference(double gate, double up, const SituGluBetas& betas = {});

// Elementwise over (rows, cols) arrays stored contiguously.
std::vector<double> situ_glu_forward_reference(const std::vector<double>& gate,
                                               const std::vector<double>& up,
                                               const SituGluBetas& betas = {});
void situ_glu_backward_reference(const std::vector<double>& gate, const std::vector<double>& up,
                                 const std::vector<double>& d_out, std::vector<double>& d_gate,
                                 std::vector<double>& d_up, const SituGluBetas& betas = {});

}  // namespace k3lab::kernels
