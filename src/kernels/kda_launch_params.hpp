#pragma once
// Host-side helpers shared by the CUDA launchers and the host emulator: argument checks and the
// translation of the public structs into the kernels' parameter block.
#include <cstddef>

#include "k3lab/kernels/kda.hpp"
#include "kda_params.hpp"

namespace k3lab::kernels::detail {

// Checks the shape, options and the pointers a forward call needs.
void check_forward_args(const KdaShape& shape, const KdaOptions& options, const KdaForwardArgs& args);
void check_backward_args(const KdaShape& shape, const KdaOptions& options,
                         const KdaBackwardArgs& args);

KdaParams make_forward_params(const KdaShape& shape, const KdaOptions& options,
                              const KdaForwardArgs& args);
KdaParams make_backward_params(const KdaShape& shape, const KdaOptions& options,
                               const KdaBackwardArgs& args);

// The backward workspace, carved: tile states first, then the gate partial sums.
struct BackwardWorkspace {
  float* tile_states;
  float* gate_partials;
};
BackwardWorkspace carve_backward_workspace(const KdaShape& shape, void* workspace);

}  // namespace k3lab::kernels::detail
