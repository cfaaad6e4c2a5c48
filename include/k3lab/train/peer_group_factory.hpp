#pragma once
// The training layer's core::PeerGroupFactory, declared without LibTorch so that programs can hand it to
// the runner without compiling c10d headers (defined in distributed.cpp).
#include <memory>
#include <string>

#include "k3lab/core/peer_group.hpp"

namespace k3lab::train {

// Joins the c10d group a launch describes, on the run's --device ("auto", "cpu", "cuda", ...).
std::unique_ptr<core::PeerGroup> make_peer_group(const core::LaunchEnvironment& launch, const std::string& device);

}  // namespace k3lab::train
