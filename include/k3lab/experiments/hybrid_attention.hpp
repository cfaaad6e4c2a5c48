#pragma once
// hybrid-attention: hybrid KDA/MLA versus full attention (seed experiment three, proxy ablation).
#include <memory>

#include "k3lab/experiments/experiment.hpp"

namespace k3lab::experiments {

std::unique_ptr<Experiment> make_hybrid_attention_experiment();

}  // namespace k3lab::experiments
