#pragma once
// The protocol's decision rule over paired (by seed) bootstrap intervals of SiTU-GLU against SwiGLU
// at the budget. k3lab reads "activation p99.9" as the p99.9 of |FFN hidden product| (the tensor
// SiTU-GLU bounds, entering the down projection) and "quantization error" as the relative RMS error
// of the FFN output (every quantizer on against full precision), both as relative reductions
// (swiglu - situ) / swiglu; quality is the validation-loss difference situ - swiglu.
//   tails reduced  both reductions have a positive mean and an interval excluding zero
//   quality lost   the loss difference has a positive mean and an interval excluding zero, or the
//                  downstream metric's difference situ - swiglu (the protocol's suite) a negative
//                  mean and an interval excluding zero: both are "quality" in the seed's boundary
//   verdict        tails reduced and no quality loss: win; tails reduced with a quality loss:
//                  trade-off (not a win); no tail reduction: not supported
#include <optional>
#include <string>

#include "k3lab/report/stats.hpp"

namespace k3lab::experiments::situ_qat {

enum class Verdict { Win, TradeOff, NotSupported };
std::string to_string(Verdict verdict);

struct Decision {
  bool tails_reduced = false;
  bool loss_lost = false;
  bool downstream_lost = false;  // false when the suite is not measured
  bool quality_lost = false;     // either of the two
  Verdict verdict = Verdict::NotSupported;
};

// Positive mean with the whole interval above zero.
bool positive_beyond_zero(const report::Interval& interval);

// downstream_difference: situ - swiglu of the protocol's downstream metric; nullopt when not measured.
Decision decide(const report::Interval& p999_reduction, const report::Interval& error_reduction,
                const report::Interval& loss_difference,
                const std::optional<report::Interval>& downstream_difference = std::nullopt);

}  // namespace k3lab::experiments::situ_qat
