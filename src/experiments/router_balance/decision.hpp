#pragma once
// The protocol's decision rule: Quantile Balancing against fixed-step-bias, paired by seed.
//   (a) load CV lower        difference QB - FSB of the mean expert-load CV: negative, interval below 0
//   (b) oscillation lower    difference QB - FSB of the mean |bias change|: negative, interval below 0
//   (c) loss within budget   upper end of the interval of (QB - FSB) / FSB final primary loss
//                            <= parameters.decision.max_relative_loss_increase
//   supported                (a) and (b) and (c)
#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::router_balance {

struct Decision {
  bool cv_lower = false;
  bool oscillation_lower = false;
  bool loss_within_budget = false;
  bool supported() const { return cv_lower && oscillation_lower && loss_within_budget; }
};

// Negative mean with the whole interval below zero.
bool negative_beyond_zero(const report::Interval& interval);

Decision decide(const report::Interval& cv_difference, const report::Interval& oscillation_difference,
                const report::Interval& relative_loss_change, double max_relative_loss_increase);

}  // namespace k3lab::experiments::router_balance
