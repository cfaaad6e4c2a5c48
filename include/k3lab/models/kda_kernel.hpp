#pragma once
// The KDA kernel adapter: the CUDA kernels of k3lab/kernels/kda.hpp as a LibTorch op with autograd,
// taking the whole kernel form of KdaChunkwiseArgs (raw gate with a_log and dt_bias, L2 norm of q
// and k, beta logits, variable-length sequences through cu_seqlens). register_cuda_kernels()
// (kernel_registration.hpp) registers it into the kda_ops.hpp seam for CUDA tensors.
//
// CUDA tensors run the kernels inside a torch::autograd::Function when the kernels accept the call:
// a build against a CUDA LibTorch, head dims that are multiples of 16 up to 128, and a log-decay
// gate no lower than lower_bound. Every other call, CPU tensors included, runs the same
// preprocessing in LibTorch ops and then kda_chunkwise (kda.hpp), the models' one LibTorch
// implementation, differentiated by LibTorch autograd. Both paths compute in float32 (float64 for
// float64 q); the output has q's dtype, the final state (N, H, K, V) the compute dtype (float32 on
// the kernels). On the kernels, q, k, v, g and beta are rounded to bf16 first.
//
// Arguments are validated the same way on both paths, so a call that runs on the CPU also runs on
// the GPU: tensor shapes and devices, and the kernels' option rules (kernels::kda_validate_options:
// lower_bound in [-5, 0), scale finite and >= 0, where 0 means K^-0.5 as in kda.hpp). Errors are
// std::invalid_argument naming the field and the fix.
#include <k3lab/kernels/kda.hpp>
#include <k3lab/models/kda_ops.hpp>

namespace k3lab::models {

// math chooses the kernels' block products (tensor-core tf32 or fp32); the LibTorch path ignores it.
KdaResult kda_chunkwise_kernel(const KdaChunkwiseArgs& args,
                               kernels::KdaMath math = kernels::KdaMath::kTensorCoreTf32);

}  // namespace k3lab::models
