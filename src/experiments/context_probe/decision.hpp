#pragma once
// The protocol's decision rule and the seed's interpretation boundary, computed from a RunDigest.
//
// Decision rule (per family and stratum, never pooled): with Wilson intervals at decision_confidence,
// a loss is detected at budget L > base (the smallest budget) when the pass rate at L is lower than at
// base and the two intervals do not overlap. The smallest such L is where that family's useful
// context ended. The hypothesis is supported when any family in any stratum shows a loss.
//
// Boundary: "retained through Z" is the largest budget Z such that every budget from base to Z has
// valid measurements and none of them shows a loss.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "context_probe/parameters.hpp"
#include "context_probe/run_digest.hpp"
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::context_probe {

struct RateAt {
  std::int64_t length = 0;
  std::size_t passes = 0;
  std::size_t valid = 0;
  report::Interval wilson;  // meaningful when valid > 0
};

struct StratumDecision {
  std::string family;
  std::string stratum;
  std::vector<RateAt> rates;                 // budgets with valid measurements, ascending
  bool base_measured = false;                // the smallest budget has valid measurements
  std::optional<std::int64_t> loss_at;       // the smallest budget with a detected loss
  std::optional<std::int64_t> retained_through;
};

std::vector<StratumDecision> decide(const Parameters& p, const RunDigest& digest);

// "supported", "not supported" or "undecided" (no family/stratum has its base budget measured).
std::string hypothesis_verdict(const std::vector<StratumDecision>& decisions);

}  // namespace k3lab::experiments::context_probe
