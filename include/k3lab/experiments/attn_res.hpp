#pragma once
// attn-res: ordinary residuals versus Attention Residuals (seed experiment four, proxy ablation).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_attn_res_experiment();

}  // namespace k3lab::experiments
