#include <k3lab/models/activations.hpp>

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace k3lab::models {

namespace {

void check_beta(const char* name, double beta) {
  if (!(beta > 0.0) || !std::isfinite(beta)) {
    throw std::invalid_argument(std::string("situ_glu: ") + name + " must be finite and > 0, got " +
                                std::to_string(beta));
  }
}

void check_pair(const char* where, const torch::Tensor& gate, const torch::Tensor& up) {
  if (!gate.defined() || !up.defined() || gate.sizes() != up.sizes()) {
    throw std::invalid_argument(std::string(where) + ": gate and up must be defined and of one shape");
  }
}

}  // namespace

torch::Tensor softcap(const torch::Tensor& z, double beta) { return beta * torch::tanh(z / beta); }

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  check_pair("swiglu", gate, up);
  return torch::silu(gate) * up;
}

torch::Tensor situ_glu(const torch::Tensor& gate, const torch::Tensor& up, double beta_gate,
                       double beta_up) {
  check_pair("situ_glu", gate, up);
  check_beta("beta_gate", beta_gate);
  check_beta("beta_up", beta_up);
  const auto cdt = gate.scalar_type() == torch::kDouble ? torch::kDouble : torch::kFloat;
  const auto g = gate.to(cdt);
  const auto u = up.to(cdt);
  return (softcap(g, beta_gate) * torch::sigmoid(g) * softcap(u, beta_up)).to(gate.scalar_type());
}

}  // namespace k3lab::models
