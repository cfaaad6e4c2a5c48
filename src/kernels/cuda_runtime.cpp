#include "k3lab/kernels/cuda_runtime.hpp"

#if K3LAB_KERNELS_CUDA
#include <cuda_runtime.h>
#endif

#include <sstream>

namespace k3lab::kernels {

bool built_with_cuda() { return K3LAB_KERNELS_CUDA != 0; }

int cuda_device_count() {
#if K3LAB_KERNELS_CUDA
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver/no device" error
    return 0;
  }
  return count;
#else
  return 0;
#endif
}

std::string cuda_device_summary() {
#if K3LAB_KERNELS_CUDA
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device: the driver reports none";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return "CUDA device 0: properties unavailable";
  std::ostringstream out;
  out << prop.name << ", sm_" << prop.major << prop.minor << ", " << prop.multiProcessorCount
      << " SMs, " << (prop.totalGlobalMem >> 20) << " MiB, " << count << " device(s)";
  return out.str();
#else
  return "this build has no CUDA kernels (nvcc was not found at configure time)";
#endif
}

}  // namespace k3lab::kernels
