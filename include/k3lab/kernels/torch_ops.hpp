#pragma once
// LibTorch autograd adapters for the SiTU-GLU kernels. For CUDA tensors they run the CUDA kernels
// inside a torch::autograd::Function (forward and backward kernels); for CPU tensors they run the
// LibTorch path (plain tensor ops, differentiated by LibTorch autograd). The CUDA path exists only
// when k3lab is built against a CUDA LibTorch (K3LAB_TORCH_CUDA); otherwise CUDA tensors get a
// clear error. KDA's adapter sits on the models' side (k3lab/models/kda_kernel.hpp) because it
// falls back to the models' LibTorch implementation; the map is at the top of kda.hpp.
#include <torch/types.h>

namespace k3lab::kernels {

// SiTU-GLU: beta_gate tanh(gate / beta_gate) sigmoid(gate) * beta_up tanh(up / beta_up).
// CUDA tensors (bf16 or float32, same shape) use the fused kernels; others the LibTorch path.
torch::Tensor situ_glu_cuda(const torch::Tensor& gate, const torch::Tensor& up,
                            double beta_gate = 4.0, double beta_up = 25.0);
torch::Tensor situ_glu_torch(const torch::Tensor& gate, const torch::Tensor& up,
                             double beta_gate = 4.0, double beta_up = 25.0);

// Whether this build can run the adapters' CUDA path (CUDA kernels and a CUDA LibTorch).
bool torch_cuda_path_available();

}  // namespace k3lab::kernels
