#pragma once
// LibTorch autograd adapters for the kernels. For CUDA tensors they run the CUDA kernels inside a
// torch::autograd::Function (forward and backward kernels); for CPU tensors they run the LibTorch
// path (plain tensor ops, differentiated by LibTorch autograd). The CUDA path exists only when k3lab
// is built against a CUDA LibTorch (K3LAB_TORCH_CUDA); otherwise CUDA tensors get a clear error.
#include <torch/types.h>

#include "k3lab/kernels/kda.hpp"

namespace k3lab::kernels {

// Inputs of one KDA call, in the layouts of kda.hpp (batch-first, heads before the head dim).
struct KdaTorchInputs {
  torch::Tensor q;              // (B, T, H, K)
  torch::Tensor k;              // (B, T, H, K)
  torch::Tensor v;              // (B, T, H, V)
  // Raw gate (B, T, H, K) used with a_log and dt_bias, or, when a_log is undefined, the activated
  // gate (log decay, each value in [lower_bound, 0]).
  torch::Tensor g;
  torch::Tensor beta;           // (B, T, H): logits or beta itself (see options)
  torch::Tensor a_log;          // (H) or undefined
  torch::Tensor dt_bias;        // (H, K) or (H * K), or undefined
  torch::Tensor initial_state;  // (N, H, K, V) or undefined for zeros
  torch::Tensor cu_seqlens;     // (N + 1) int64 offsets with B = 1, or undefined
};

struct KdaTorchOptions {
  double scale = 0.0;           // 0: K^-0.5
  double lower_bound = -5.0;
  bool l2norm_qk = true;
  bool beta_is_logits = true;
  KdaMath math = KdaMath::kTensorCoreTf32;  // CUDA path only
};

struct KdaTorchResult {
  torch::Tensor output;       // (B, T, H, V), dtype of q
  torch::Tensor final_state;  // (N, H, K, V), float32 (float64 on the CPU path for float64 q)
};

// Dispatches on q's device: CUDA kernels (bf16 q/k/v/beta; other dtypes are converted, gradients
// come back in the caller's dtypes) or the LibTorch path on CPU.
KdaTorchResult kda_chunkwise_cuda(const KdaTorchInputs& inputs, const KdaTorchOptions& options = {});

// The LibTorch path on any device: 16-token chunkwise form in float32 (float64 for float64 q).
KdaTorchResult kda_chunkwise_torch(const KdaTorchInputs& inputs, const KdaTorchOptions& options = {});

// SiTU-GLU: beta_gate tanh(gate / beta_gate) sigmoid(gate) * beta_up tanh(up / beta_up).
// CUDA tensors (bf16 or float32, same shape) use the fused kernels; others the LibTorch path.
torch::Tensor situ_glu_cuda(const torch::Tensor& gate, const torch::Tensor& up,
                            double beta_gate = 4.0, double beta_up = 25.0);
torch::Tensor situ_glu_torch(const torch::Tensor& gate, const torch::Tensor& up,
                             double beta_gate = 4.0, double beta_up = 25.0);

// Whether this build can run the adapters' CUDA path (CUDA kernels and a CUDA LibTorch).
bool torch_cuda_path_available();

// Registers the CUDA implementations into the model seams (include/k3lab/models/kda_ops.hpp and
// situ_glu_ops.hpp) for c10::DeviceType::CUDA. Returns false, registering nothing, when the CUDA
// path is unavailable in this build. Idempotent.
bool register_torch_kernels();

}  // namespace k3lab::kernels
