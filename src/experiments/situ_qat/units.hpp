#pragma once
// situ-qat (seed experiment six): SwiGLU vs SiTU-GLU (beta1=4, beta2=25) under MXFP4-weight /
// MXFP8-activation quantization-aware training, five paired seeds. The design: its arms, the frozen
// run ledger (training/design.hpp: seed by seed, SwiGLU then SiTU-GLU), what `k3lab plan` shows, and
// the module's one factory. Running: run_unit.hpp; page: page.hpp.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "k3lab/experiments/experiment.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// swiglu (control), situ-glu (intervention).
const std::vector<std::string>& arm_ids();

std::vector<Unit> enumerate_units(const Parameters& p);

// Runs by axis, tokens, checkpoints, the QAT setup and a labelled GPU-hour estimate.
nlohmann::json plan_details(const Parameters& p, const std::vector<Unit>& units);

std::unique_ptr<Experiment> make_experiment();

}  // namespace k3lab::experiments::situ_qat
