#pragma once
// The CUDA half of the KDA kernel adapter (private to src/models): the torch::autograd::Function
// whose forward and backward launch kernels::kda_forward and kernels::kda_backward.
#include <k3lab/kernels/kda.hpp>
#include <k3lab/models/kda_ops.hpp>

#include <cstdint>
#include <vector>

namespace k3lab::models::detail {

// One call as kda_chunkwise_kernel has checked it: the kernels' shape and options, and the
// sequence offsets on the host (empty for a fixed-length batch).
struct KdaKernelCall {
  kernels::KdaShape shape;
  kernels::KdaOptions options;
  std::vector<std::int64_t> offsets;
};

// Only for CUDA tensors the kernels accept (kda_kernel.cpp decides); throws std::runtime_error in
// builds without a CUDA LibTorch.
KdaResult kda_chunkwise_cuda_function(const KdaChunkwiseArgs& args, const KdaKernelCall& call);

}  // namespace k3lab::models::detail
