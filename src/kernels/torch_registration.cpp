// Registers the CUDA kernels into the model seams (include/k3lab/models/kda_ops.hpp,
// situ_glu_ops.hpp). The KDA seam passes the activated gate, normalised q/k and beta itself, so
// the kernels run in their log-decay mode; calls the kernels cannot take (head dims that are not
// multiples of 16 up to 128, or a gate below -5 per token) keep the LibTorch path.
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/situ_glu_ops.hpp>

#include "k3lab/kernels/torch_ops.hpp"

namespace k3lab::kernels {
namespace {

constexpr double kKernelGateBound = -5.0;

bool head_dim_ok(std::int64_t dim) { return dim % 16 == 0 && dim >= 16 && dim <= kKdaMaxHeadDim; }

models::KdaResult kda_seam(const models::KdaChunkwiseArgs& a) {
  const bool shapes_ok = a.q.dim() == 4 && head_dim_ok(a.q.size(-1)) && head_dim_ok(a.v.size(-1));
  // One reduction and a host sync per call: the price of never feeding the kernels a gate that
  // breaks their 16-token factorisation (the K3 bounded gate always passes).
  const bool gate_ok = shapes_ok && (a.g.numel() == 0 || a.g.min().item<double>() >= kKernelGateBound);
  if (!gate_ok) {
    return models::kda_chunkwise(a.q, a.k, a.v, a.g, a.beta, a.initial_state, a.chunk_size, a.scale);
  }
  KdaTorchInputs in;
  in.q = a.q;
  in.k = a.k;
  in.v = a.v;
  in.g = a.g;
  in.beta = a.beta;
  if (a.initial_state) in.initial_state = *a.initial_state;
  KdaTorchOptions options;
  options.scale = a.scale.value_or(0.0);
  options.lower_bound = kKernelGateBound;
  options.l2norm_qk = false;
  options.beta_is_logits = false;
  const KdaTorchResult r = kda_chunkwise_cuda(in, options);
  return {r.output, r.final_state};
}

}  // namespace

bool register_torch_kernels() {
  if (!torch_cuda_path_available()) return false;
  models::register_kda_chunkwise_impl(c10::DeviceType::CUDA, kda_seam);
  models::register_situ_glu_impl(c10::DeviceType::CUDA, [](const models::SituGluArgs& a) {
    return situ_glu_cuda(a.gate, a.up, a.beta_gate, a.beta_up);
  });
  return true;
}

}  // namespace k3lab::kernels
