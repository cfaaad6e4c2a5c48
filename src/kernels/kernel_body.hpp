#pragma once
// Kernel bodies are written once and compiled twice: by nvcc as device code (the real kernels) and
// by the host compiler for the emulator (host_block.hpp), which runs them thread by thread.
#include <cstdint>

#if defined(__CUDACC__)
#define K3LAB_KERNEL_BODY __device__ __forceinline__
#else
#define K3LAB_KERNEL_BODY inline
#endif

namespace k3lab::kernels::detail {

// One block runs this many threads, on the device and in the emulator.
inline constexpr int kBlockThreads = 256;

K3LAB_KERNEL_BODY std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace k3lab::kernels::detail
