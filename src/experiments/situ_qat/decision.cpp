#include "situ_qat/decision.hpp"

namespace k3lab::experiments::situ_qat {

std::string to_string(Verdict verdict) {
  if (verdict == Verdict::Win) return "win";
  if (verdict == Verdict::TradeOff) return "trade-off, not a win";
  return "not supported";
}

bool positive_beyond_zero(const report::Interval& interval) {
  return interval.estimate > 0 && interval.low > 0 && interval.high > 0;
}

Decision decide(const report::Interval& p999_reduction, const report::Interval& error_reduction,
                const report::Interval& loss_difference,
                const std::optional<report::Interval>& downstream_difference) {
  Decision d;
  d.tails_reduced = positive_beyond_zero(p999_reduction) && positive_beyond_zero(error_reduction);
  d.loss_lost = positive_beyond_zero(loss_difference);
  d.downstream_lost = downstream_difference && downstream_difference->estimate < 0 && downstream_difference->high < 0;
  d.quality_lost = d.loss_lost || d.downstream_lost;
  d.verdict = !d.tails_reduced ? Verdict::NotSupported : d.quality_lost ? Verdict::TradeOff : Verdict::Win;
  return d;
}

}  // namespace k3lab::experiments::situ_qat
