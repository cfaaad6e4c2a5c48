#include "per_head_muon/decision.hpp"

namespace k3lab::experiments::per_head_muon {

Decision decide(const report::Interval& dispersion_reduction, const report::Interval& loss_difference,
                double step_time_overhead, double max_overhead,
                const std::optional<report::Interval>& end_task_difference) {
  Decision d;
  d.dispersion_lower = dispersion_reduction.estimate > 0 && dispersion_reduction.low > 0;
  d.loss_better = loss_difference.estimate < 0 && loss_difference.high < 0;
  d.end_task_better = end_task_difference && end_task_difference->estimate > 0 && end_task_difference->low > 0;
  d.quality_better = d.loss_better || d.end_task_better;
  d.cost_acceptable = step_time_overhead <= max_overhead;
  return d;
}

}  // namespace k3lab::experiments::per_head_muon
