#include "per_head_muon/muon_optimizer.hpp"

#include <stdexcept>

namespace k3lab::experiments::per_head_muon {

std::string optimizer_name(const std::string& arm) { return arm == "adamw" ? "phm-adamw" : arm; }

train::MuonVariant muon_variant(const std::string& arm) {
  if (arm == "adamw") return train::MuonVariant::AdamW;
  if (arm == "muon") return train::MuonVariant::Muon;
  if (arm == "per-head-muon") return train::MuonVariant::PerHeadMuon;
  throw std::invalid_argument("per-head-muon: unknown arm \"" + arm + "\"; the arms are adamw, muon, per-head-muon");
}

train::OptimizerFactory arm_optimizer_factory(const std::string& arm, std::shared_ptr<train::OptimizerProbe> probe) {
  return train::muon_optimizer_factory(muon_variant(arm), std::move(probe));
}

}  // namespace k3lab::experiments::per_head_muon
