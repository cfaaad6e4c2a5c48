#pragma once
// The protocol's decision rule, Per-Head Muon against standard Muon paired by confirmatory seed:
//   (a) dispersion lower   relative reduction (muon - per-head) / muon of the run's mean update-norm
//                          dispersion: positive mean, interval excluding zero
//   (b) convergence or end-task quality better, as the seed asks ("convergence or end-task quality"):
//                          the validation-loss difference per-head - muon has a negative mean and an
//                          interval excluding zero, or the downstream metric's difference (the
//                          protocol's suite, training/downstream.hpp) a positive one
//   (c) cost acceptable    mean paired relative step-time overhead (per-head - muon) / muon at most
//                          parameters.decision.max_step_time_overhead (point estimate)
//   supported when (a), (b) and (c) hold.
#include <optional>
#include <string>

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::per_head_muon {

struct Decision {
  bool dispersion_lower = false;
  bool loss_better = false;
  bool end_task_better = false;  // false when the suite is not measured
  bool quality_better = false;   // either of the two
  bool cost_acceptable = false;
  bool supported() const { return dispersion_lower && quality_better && cost_acceptable; }
};

// end_task_difference: per-head - muon of the protocol's downstream metric; nullopt when not measured.
Decision decide(const report::Interval& dispersion_reduction, const report::Interval& loss_difference,
                double step_time_overhead, double max_overhead,
                const std::optional<report::Interval>& end_task_difference = std::nullopt);

}  // namespace k3lab::experiments::per_head_muon
