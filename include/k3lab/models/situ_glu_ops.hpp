#pragma once
// The seam between the models and device kernels for SiTU-GLU, like kda_ops.hpp: situ_glu_op runs
// the LibTorch situ_glu (activations.hpp) unless an implementation is registered for the device
// type of `gate`. A registered implementation used for training must carry its own backward.
#include <k3lab/models/activations.hpp>

#include <c10/core/DeviceType.h>

#include <functional>

namespace k3lab::models {

struct SituGluArgs {
  torch::Tensor gate, up;  // same shape, (..., F)
  double beta_gate = 4.0;
  double beta_up = 25.0;
};

using SituGluImpl = std::function<torch::Tensor(const SituGluArgs&)>;

void register_situ_glu_impl(c10::DeviceType device, SituGluImpl impl);
bool has_situ_glu_impl(c10::DeviceType device);

torch::Tensor situ_glu_op(const torch::Tensor& gate, const torch::Tensor& up,
                          double beta_gate = 4.0, double beta_up = 25.0);

}  // namespace k3lab::models
