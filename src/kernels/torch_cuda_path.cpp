// Whether the LibTorch adapters can launch the CUDA kernels: both the kernels (nvcc) and a CUDA
// LibTorch must be in this build.
#include "k3lab/kernels/cuda_runtime.hpp"
#include "k3lab/kernels/torch_ops.hpp"

namespace k3lab::kernels {

bool torch_cuda_path_available() { return K3LAB_TORCH_CUDA != 0 && built_with_cuda(); }

}  // namespace k3lab::kernels
