#pragma once
// torch::matmul for stacks of small matrices, with the stack split across the intra-op threads.
//
// ATen 1.13's CPU bmm multiplies the matrices of a batch one after another, and OpenBLAS keeps a
// 64 x 64 x 64 product on one thread, so KDA's chunk loop (16 such products per call at the bench
// shape) left the second core idle (docs/benchmarks.md, issue 19). batched_matmul runs the same
// per-matrix products (the same BLAS call on the same strides, so the values are bit-identical to
// torch::matmul's) in parallel over the batch, forward and backward, for float32 and float64 CPU
// tensors. Elsewhere (CUDA, other dtypes, products small enough for ATen's own batched kernel, one
// thread) it is torch::matmul.
#include <torch/types.h>

namespace k3lab::models {

// a (..., m, k) x b (..., k, n) -> (..., m, n); a and b have the same leading (batch) sizes.
torch::Tensor batched_matmul(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace k3lab::models
