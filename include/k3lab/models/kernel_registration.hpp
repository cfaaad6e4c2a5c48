#pragma once
// Plugs the CUDA kernels into the model seams (kda_ops.hpp, situ_glu_ops.hpp). It lives on the
// seam side so that src/kernels includes nothing of the models; the binaries call it at start-up.

namespace k3lab::models {

// Registers, for c10::DeviceType::CUDA, kda_chunkwise_kernel (kda_kernel.hpp) into the KDA seam
// and kernels::situ_glu_cuda into the SiTU-GLU seam. Returns false, registering nothing, when this
// build cannot run the kernels on CUDA tensors (no nvcc or a CPU-only LibTorch). Idempotent.
bool register_cuda_kernels();

}  // namespace k3lab::models
