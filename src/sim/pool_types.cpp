#include "k3lab/sim/pool_types.hpp"

#include <stdexcept>

namespace k3lab::sim {

std::string shortage_name(Shortage s) {
  switch (s) {
    case Shortage::None: return "none";
    case Shortage::StatePool: return "state-pool";
    case Shortage::KvPool: return "kv-pool";
    case Shortage::BothPools: return "both-pools";
    case Shortage::Shared: return "shared-pool";
  }
  return "?";
}

std::string policy_kind_name(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::FixedSplit: return "fixed-split";
    case PolicyKind::Unified: return "unified";
    case PolicyKind::PaddedSinglePage: return "padded-single-page";
  }
  return "?";
}

PolicyKind parse_policy_kind(const std::string& name) {
  if (name == "fixed-split") return PolicyKind::FixedSplit;
  if (name == "unified") return PolicyKind::Unified;
  if (name == "padded-single-page") return PolicyKind::PaddedSinglePage;
  throw std::invalid_argument("unknown policy kind \"" + name +
                              "\": use fixed-split, unified or padded-single-page");
}

}  // namespace k3lab::sim
