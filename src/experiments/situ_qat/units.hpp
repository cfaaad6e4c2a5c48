#pragma once
// The frozen run ledger of situ-qat: every (arm, seed) QAT run, five seeds paired across two arms.
//
// Unit ids: arm=<arm>/seed=<seed value>. Order: seed by seed, SwiGLU then SiTU-GLU inside each seed.
#include <string>
#include <vector>

#include "k3lab/core/protocol.hpp"
#include "k3lab/experiments/experiment.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {

// swiglu (control), situ-glu (intervention).
const std::vector<std::string>& arm_ids();

// Throws std::invalid_argument unless the protocol's arms are exactly these two.
void require_arms(const std::vector<core::Arm>& arms);

std::string unit_id(const std::string& arm, std::uint64_t seed);

std::vector<Unit> enumerate_units(const Parameters& p);

}  // namespace k3lab::experiments::situ_qat
