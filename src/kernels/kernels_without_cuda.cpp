// Launchers for builds without nvcc: each says how to get the kernels instead of failing silently.
#include <stdexcept>
#include <string>

#include "k3lab/kernels/kda.hpp"
#include "k3lab/kernels/situ_glu.hpp"

namespace k3lab::kernels {
namespace {

[[noreturn]] void no_cuda(const char* what) {
  throw std::runtime_error(std::string(what) +
                           ": this k3lab build has no CUDA kernels; install the CUDA toolkit and "
                           "reconfigure with -DK3LAB_CUDA=ON (or use the host reference/emulation)");
}

}  // namespace

void kda_forward(const KdaShape&, const KdaOptions&, const KdaForwardArgs&, Stream) {
  no_cuda("kda_forward");
}
void kda_backward(const KdaShape&, const KdaOptions&, const KdaBackwardArgs&, Stream) {
  no_cuda("kda_backward");
}
void situ_glu_forward(const SituGluShape&, const SituGluBetas&, const Bf16*, const Bf16*, Bf16*,
                      Stream) {
  no_cuda("situ_glu_forward");
}
void situ_glu_forward(const SituGluShape&, const SituGluBetas&, const float*, const float*, float*,
                      Stream) {
  no_cuda("situ_glu_forward");
}
void situ_glu_backward(const SituGluShape&, const SituGluBetas&, const Bf16*, const Bf16*,
                       const Bf16*, Bf16*, Bf16*, Stream) {
  no_cuda("situ_glu_backward");
}
void situ_glu_backward(const SituGluShape&, const SituGluBetas&, const float*, const float*,
                       const float*, float*, float*, Stream) {
  no_cuda("situ_glu_backward");
}
void situ_glu_forward_unfused(const SituGluShape&, const SituGluBetas&, const Bf16*, const Bf16*,
                              Bf16*, float*, Stream) {
  no_cuda("situ_glu_forward_unfused");
}

}  // namespace k3lab::kernels
