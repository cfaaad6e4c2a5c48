// Registers the CUDA kernels into the model seams. The KDA seam passes the activated gate,
// normalised q and k and beta itself (KdaChunkwiseArgs' kernel-form fields at their defaults), so
// the kernels run in their log-decay mode; the adapter keeps the LibTorch path for calls the
// kernels cannot take (kda_kernel.hpp).
#include <k3lab/models/kernel_registration.hpp>

#include <k3lab/kernels/torch_ops.hpp>
#include <k3lab/models/kda_kernel.hpp>
#include <k3lab/models/kda_ops.hpp>
#include <k3lab/models/situ_glu_ops.hpp>

namespace k3lab::models {

bool register_cuda_kernels() {
  if (!kernels::torch_cuda_path_available()) return false;
  register_kda_chunkwise_impl(c10::DeviceType::CUDA,
                              [](const KdaChunkwiseArgs& args) { return kda_chunkwise_kernel(args); });
  register_situ_glu_impl(c10::DeviceType::CUDA, [](const SituGluArgs& a) {
    return kernels::situ_glu_cuda(a.gate, a.up, a.beta_gate, a.beta_up);
  });
  return true;
}

}  // namespace k3lab::models
