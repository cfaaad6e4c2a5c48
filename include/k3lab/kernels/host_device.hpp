#pragma once
// K3LAB_HD marks functions that compile for both the host and the device. The kernel bodies use it
// so that the very same code runs on a GPU and in the host emulator (tests on machines without one).
#if defined(__CUDACC__)
#define K3LAB_HD __host__ __device__
#define K3LAB_HD_INLINE __host__ __device__ __forceinline__
#else
#define K3LAB_HD
#define K3LAB_HD_INLINE inline
#endif
