#pragma once
// The seam between the models and device kernels for KDA.
//
// Layers call kda_chunkwise_op / kda_decode_op. Today these run the LibTorch paths in kda.hpp.
// A kernel library (src/kernels) registers an implementation for a device type at start-up:
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

struct KdaChunkwiseArgs {
  torch::Tensor q, k, v, g, beta;              // (B, T, H, K) x3 with v (B, T, H, V), beta (B, T, H)
  std::optional<torch::Tensor> initial_state;  // (B, H, K, V)
  std::int64_t chunk_size = 64;
  std::optional<double> scale;                 // default K^-0.5
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
