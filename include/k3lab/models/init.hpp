#pragma once
// Deterministic parameter initialisation from k3lab's generator. Each parameter draws from its own
// stream, seeded by (seed, FNV-1a of its full name), so adding a module never shifts the others
// and two arms share the values of every parameter they have in common.
//   Linear weights      N(0, stddev); output projections (o_proj, down_proj) N(0, stddev / sqrt(2 L))
//   Linear biases       0
//   Embedding           N(0, stddev)
//   RMSNorm gains       1
//   ShortConv weights   U(-1/sqrt(kernel), 1/sqrt(kernel))  (PyTorch's conv default bound)
//   KDA A_log           0 with the bounded gate (fla safe_gate), else log U(1, 16)
//   KDA dt_bias         inv_softplus(dt), dt = exp(U(log 1e-3, log 1e-1)) clamped >= 1e-4 (fla)
//   AttnRes queries     0 (uniform depth mixing at step 0); AttnRes key gains 1
// Any parameter without a rule is an error, so a new module cannot silently keep LibTorch's
// (version-dependent) default initialisation.
#include <torch/nn/module.h>

#include <cstdint>

namespace k3lab::models {

struct InitOptions {
  double stddev = 0.02;
  std::int64_t num_layers = 1;  // L in the output-projection scaling
};

void initialize_parameters(torch::nn::Module& root, std::uint64_t seed, const InitOptions& options = {});

}  // namespace k3lab::models
