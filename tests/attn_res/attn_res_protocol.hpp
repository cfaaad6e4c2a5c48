#pragma once
// The committed attn-res protocol, loaded once per test binary (shared by the module's tests).
#include <filesystem>

#include "attn_res/parameters.hpp"
#include "k3lab/core/protocol.hpp"

namespace k3lab::experiments::attn_res::testing {

inline const core::Protocol& attn_res_protocol() {
  static const core::Protocol p = core::load_protocol(
      std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/attn-res.json", &parameter_schema());
  return p;
}

}  // namespace k3lab::experiments::attn_res::testing
