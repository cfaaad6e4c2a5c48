#include "router_balance/decision.hpp"

namespace k3lab::experiments::router_balance {

bool negative_beyond_zero(const report::Interval& interval) {
  return interval.estimate < 0 && interval.low < 0 && interval.high < 0;
}

Decision decide(const report::Interval& cv_difference, const report::Interval& oscillation_difference,
                const report::Interval& relative_loss_change, double max_relative_loss_increase) {
  Decision d;
  d.cv_lower = negative_beyond_zero(cv_difference);
  d.oscillation_lower = negative_beyond_zero(oscillation_difference);
  d.loss_within_budget = relative_loss_change.high <= max_relative_loss_increase;
  return d;
}

}  // namespace k3lab::experiments::router_balance
