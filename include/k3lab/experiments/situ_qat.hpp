#pragma once
// situ-qat: SiTU-GLU under quantization-aware training (seed experiment six, proxy ablation).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_situ_qat_experiment();

}  // namespace k3lab::experiments
