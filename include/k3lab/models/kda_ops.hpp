#pragma once
// The seam between the models and device kernels for KDA.
//
// Layers call kda_chunkwise_op / kda_decode_op, which run the LibTorch paths in kda.hpp unless an
// implementation is registered for the device type (register_cuda_kernels() in
// kernel_registration.hpp registers kda_kernel.hpp's adapter for CUDA at start-up):
//
//     k3lab::models::register_kda_chunkwise_impl(c10::DeviceType::CUDA, &my_cuda_chunkwise);
//
// After that, calls whose q lives on that device type go to the registered function; all other
// calls keep the LibTorch path. A registered function receives exactly the arguments the caller
// passed (same layouts as kda.hpp) and must return the same KdaResult contract. If it is used for
// training it must carry its own backward (for example a torch::autograd::Function); the seam
// does not add one. Registering an empty function removes the registration.
#include <k3lab/models/kda.hpp>

#include <c10/core/DeviceType.h>

#include <functional>

namespace k3lab::models {

// The one tensor-argument struct of KDA's chunkwise form: what the seam hands to a registered
// implementation, and what the kernel adapter (kda_kernel.hpp) takes. The first block is what the
// models pass; the kernel-form block names the preprocessing the CUDA kernels can fuse. The seam
// leaves that block at its defaults (the layer has already normalised q and k, activated the gate
// and applied the sigmoid), which kda_chunkwise computes as they stand.
struct KdaChunkwiseArgs {
  torch::Tensor q, k, v;   // (B, T, H, K), (B, T, H, K), (B, T, H, V)
  torch::Tensor g;         // (B, T, H, K): the log decay (<= 0), or the raw gate when a_log is set
  torch::Tensor beta;      // (B, T, H): beta in (0, 1), or its logits when beta_is_logits
  std::optional<torch::Tensor> initial_state;  // (N, H, K, V); N = B, or the sequences of cu_seqlens
  std::int64_t chunk_size = 64;
  std::optional<double> scale;                 // default K^-0.5

  // Kernel form (the layouts and math of k3lab/kernels/kda.hpp).
  torch::Tensor a_log;       // (H): with dt_bias, g is the raw gate and the bounded gate applies
  torch::Tensor dt_bias;     // (H, K) or (H * K)
  torch::Tensor cu_seqlens;  // (N + 1) int64 offsets; B = 1 and the sequences are packed along T
  double lower_bound = -5.0; // the gate's bound, in [-5, 0): raw gates map into (lower_bound, 0)
  bool l2norm_qk = false;    // L2-normalise q and k first (eps 1e-6)
  bool beta_is_logits = false;
};

struct KdaDecodeArgs {
  torch::Tensor q, k, v, g, beta;  // (B, H, K) x3 with v (B, H, V), beta (B, H)
  torch::Tensor state;             // (B, H, K, V)
  std::optional<double> scale;
};

using KdaChunkwiseImpl = std::function<KdaResult(const KdaChunkwiseArgs&)>;
using KdaDecodeImpl = std::function<KdaResult(const KdaDecodeArgs&)>;

void register_kda_chunkwise_impl(c10::DeviceType device, KdaChunkwiseImpl impl);
void register_kda_decode_impl(c10::DeviceType device, KdaDecodeImpl impl);
bool has_kda_chunkwise_impl(c10::DeviceType device);
bool has_kda_decode_impl(c10::DeviceType device);

KdaResult kda_chunkwise_op(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                           const torch::Tensor& g, const torch::Tensor& beta,
                           const std::optional<torch::Tensor>& initial_state = std::nullopt,
                           std::int64_t chunk_size = 64,
                           std::optional<double> scale = std::nullopt);

KdaResult kda_decode_op(const torch::Tensor& q_t, const torch::Tensor& k_t,
                        const torch::Tensor& v_t, const torch::Tensor& g_t,
                        const torch::Tensor& beta_t, const torch::Tensor& state,
                        std::optional<double> scale = std::nullopt);

}  // namespace k3lab::models
