#pragma once
// Turns CUDA runtime errors into exceptions that say where they happened.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace k3lab::kernels::detail {

inline void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " +
                             cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

// Sets the dynamic shared-memory opt-in of `kernel` and checks it fits the current device.
template <class Kernel>
void prepare_smem(Kernel kernel, std::size_t bytes, const char* what) {
  int device = 0;
  cuda_check(cudaGetDevice(&device), what);
  int limit = 0;
  cuda_check(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), what);
  if (bytes > static_cast<std::size_t>(limit)) {
    throw std::runtime_error(std::string(what) + " needs " + std::to_string(bytes) +
                             " bytes of shared memory per block but this GPU allows " +
                             std::to_string(limit) +
                             "; use smaller head dimensions or a GPU with more (H100/H200: 227 KiB)");
  }
  cuda_check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)),
             what);
}

}  // namespace k3lab::kernels::detail
