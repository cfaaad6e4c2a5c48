#pragma once
// The few CUDA runtime facts host code needs without including CUDA headers.
#include <string>

// Declared at global scope exactly as the CUDA headers do, so that Stream is cudaStream_t whether
// or not they were included first.
struct CUstream_st;

namespace k3lab::kernels {

// Same type as cudaStream_t; nullptr is the legacy default stream.
using Stream = ::CUstream_st*;

// True when this build has the CUDA kernels (nvcc was found at configure time).
bool built_with_cuda();

// Number of usable CUDA devices; 0 when the build has no CUDA, there is no driver or no device.
int cuda_device_count();

// One line naming device 0 (name, compute capability, memory), or why there is none.
std::string cuda_device_summary();

}  // namespace k3lab::kernels
