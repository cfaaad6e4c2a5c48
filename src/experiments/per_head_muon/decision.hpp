#pragma once
// The protocol's decision rule, Per-Head Muon against standard Muon paired by confirmatory seed:
//   (a) dispersion lower   relative reduction (muon - per-head) / muon of the run's mean update-norm
//                          dispersion: positive mean, interval excluding zero
//   (b) quality better     validation-loss difference per-head - muon: negative mean, interval
//                          excluding zero (end-task quality is not measured: no suite declared)
//   (c) cost acceptable    mean paired relative step-time overhead (per-head - muon) / muon at most
//                          parameters.decision.max_step_time_overhead (point estimate)
//   supported when (a), (b) and (c) hold.
#include <string>

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::per_head_muon {

struct Decision {
  bool dispersion_lower = false;
  bool quality_better = false;
  bool cost_acceptable = false;
  bool supported() const { return dispersion_lower && quality_better && cost_acceptable; }
};

Decision decide(const report::Interval& dispersion_reduction, const report::Interval& loss_difference,
                double step_time_overhead, double max_overhead);

}  // namespace k3lab::experiments::per_head_muon
