// situ-qat's metric computations against hand-computed values: tail quantiles, log histograms,
// relative RMS error of MX fake quantisation, saturation, the protocol's loss spikes and the
// decision rule.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "k3lab/core/rng.hpp"
#include "k3lab/models/fake_quant.hpp"
#include "k3lab/report/stats.hpp"
#include "situ_qat/activation_stats.hpp"
#include "situ_qat/decision.hpp"
#include "situ_qat/loss_spikes.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

TEST(TailQuantiles, MatchesTypeSevenOnMagnitudesStreamedInPieces) {
  // |values| sorted: 1..10; h = 9 q. q = 0.9: h = 8.1 -> 9 + 0.1 (10 - 9) = 9.1; q = 0.99: 9.91.
  TailQuantiles t(10, 0.9);
  t.add(torch::tensor({-3.0, 1.0, 10.0, 7.0}));
  t.add(torch::tensor({2.0, -9.0, 4.0, 5.0, 6.0, 8.0}));
  EXPECT_NEAR(t.quantile(0.9), 9.1, 1e-12);
  EXPECT_NEAR(t.quantile(0.99), 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(t.quantile(1.0), 10.0);
  EXPECT_DOUBLE_EQ(t.max(), 10.0);
  EXPECT_THROW(t.quantile(0.5), std::logic_error);  // below the declared lowest quantile: not kept
}

TEST(TailQuantiles, AgreesWithReportQuantileOnRandomData) {
  core::Rng rng(7);
  std::vector<double> all;
  TailQuantiles t(1003, 0.99);
  for (int piece : {1, 500, 2, 500}) {
    std::vector<double> v;
    for (int i = 0; i < piece; ++i) v.push_back(rng.normal() * 3.0);
    for (double x : v) all.push_back(std::abs(x));
    t.add(torch::tensor(v, torch::kFloat64));
  }
  EXPECT_NEAR(t.quantile(0.99), report::quantile(all, 0.99), 1e-12);
  EXPECT_NEAR(t.quantile(0.999), report::quantile(all, 0.999), 1e-12);
}

TEST(TailQuantiles, RefusesAQuantileBeforeEveryValueArrived) {
  TailQuantiles t(4, 0.99);
  t.add(torch::tensor({1.0, 2.0}));
  EXPECT_THROW(t.quantile(0.99), std::logic_error);
}

TEST(LogHistogram, BinsLog2MagnitudesWithZerosUnderflowOverflowAndNonFinite) {
  // 64 bins over log2 in [-32, 32): one bin per octave, bin b holds [b - 32, b - 31).
  LogHistogram h(64);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  h.add(torch::tensor({0.0, 1.0, 1.5, 2.0, 0.25, -3.0, std::ldexp(1.0, 40), std::ldexp(1.0, -40), nan}));
  const auto j = h.to_json();
  EXPECT_EQ(j.at("zero"), 1);
  EXPECT_EQ(j.at("underflow"), 1);
  EXPECT_EQ(j.at("overflow"), 1);
  EXPECT_EQ(j.at("non_finite"), 1);
  EXPECT_EQ(j.at("first_bin"), 30);  // 0.25 = 2^-2
  EXPECT_EQ(j.at("counts"), nlohmann::json({1, 0, 2, 2}));  // [0.25], [], [1, 1.5], [2, 3]
  EXPECT_EQ(h.counts()[32], 2);
}

TEST(RelativeError, IsTheRelativeRmsError) {
  RelativeError e;
  e.add(torch::tensor({3.0}), torch::tensor({3.0}));
  e.add(torch::tensor({4.0}), torch::tensor({5.0}));
  EXPECT_DOUBLE_EQ(e.value(), 0.2);  // sqrt(1 / 25)
  EXPECT_DOUBLE_EQ(RelativeError().value(), 0.0);
}

TEST(RelativeError, OfMxfp4OnOneBlock) {
  // Block max 7: shared exponent floor(log2 7) - 2 = 0, scale 1; 7 clips to 6 (FP4 max), 1 and 0.5
  // are exact, 2.4 rounds to 2. Error^2 = 1 + 0.16, reference^2 = 49 + 1 + 0.25 + 5.76.
  std::vector<float> v(32, 0.0f);
  v[0] = 7.0f;
  v[1] = 1.0f;
  v[2] = -0.5f;
  v[3] = 2.4f;
  const auto x = torch::tensor(v);
  const auto q = models::mx_fake_quantize(x, models::MxElement::Fp4E2M1, 32);
  EXPECT_FLOAT_EQ(q[0].item<float>(), 6.0f);
  EXPECT_FLOAT_EQ(q[3].item<float>(), 2.0f);
  RelativeError e;
  e.add(x, q);
  EXPECT_NEAR(e.value(), std::sqrt(1.16 / 56.01), 1e-6);
}

TEST(SaturationCount, CountsTanhAtOrAboveTheLevel) {
  // beta 4, level 0.95: saturated iff |z| >= 4 atanh(0.95) = 7.3277.
  SaturationCount s;
  s.add(torch::tensor({0.0, 7.0, 7.5, -8.0, 100.0}), 4.0, 0.95);
  EXPECT_EQ(s.saturated(), 3);
  EXPECT_EQ(s.total(), 5);
  EXPECT_DOUBLE_EQ(s.fraction(), 0.6);
}

TEST(LossSpikes, FollowTheProtocolsTrailingMeanAndSigmaRule) {
  // Window 3, 2 sigma. Step 3: window {1, 1.1, 0.9}, mean 1, sd 0.1: 1 is no spike. Step 4: window
  // {1.1, 0.9, 1}, mean 1, sd 0.1: 5 > 1.2 is a spike. Step 5: window {0.9, 1, 5}, mean 2.3,
  // sd sqrt(5.47) = 2.339: 1 is not. A non-finite loss (a failed last step) is never a spike.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> losses = {1.0, 1.1, 0.9, 1.0, 5.0, 1.0, nan};
  const auto spikes = detect_loss_spikes(losses, 3, 2.0);
  ASSERT_EQ(spikes.size(), 1u);
  EXPECT_EQ(spikes[0].step, 4);
  EXPECT_NEAR(spikes[0].trailing_mean, 1.0, 1e-12);
  EXPECT_NEAR(spikes[0].trailing_sd, 0.1, 1e-12);
  const auto j = loss_spikes_json(losses, 3, 2.0, 128);
  EXPECT_EQ(j.at("count"), 1);
  EXPECT_EQ(j.at("spikes")[0].at("tokens"), 5 * 128);
  EXPECT_TRUE(detect_loss_spikes({1.0, 2.0}, 3, 2.0).empty());  // shorter than the window
}

report::Interval interval(double estimate, double low, double high) { return {estimate, low, high, 0.95}; }

TEST(Decision, WinTradeOffOrNotSupported) {
  const auto reduced = interval(0.3, 0.1, 0.5);
  const auto unclear = interval(0.3, -0.1, 0.5);
  const auto lost = interval(0.02, 0.01, 0.03);
  const auto kept = interval(0.01, -0.01, 0.03);
  EXPECT_EQ(decide(reduced, reduced, kept).verdict, Verdict::Win);
  EXPECT_EQ(decide(reduced, reduced, lost).verdict, Verdict::TradeOff);
  EXPECT_EQ(decide(reduced, unclear, kept).verdict, Verdict::NotSupported);  // both tails measures must hold
  EXPECT_EQ(decide(unclear, reduced, lost).verdict, Verdict::NotSupported);
  EXPECT_FALSE(decide(reduced, reduced, interval(-0.02, -0.03, -0.01)).quality_lost);  // a gain is no loss
  EXPECT_EQ(to_string(Verdict::TradeOff), "trade-off, not a win");
}

// Downstream quality counts as quality: a reliable drop makes reduced tails a trade-off even when the
// validation loss is kept; an unclear drop or a gain does not.
TEST(Decision, AReliableDownstreamDropIsAQualityLoss) {
  const auto reduced = interval(0.3, 0.1, 0.5);
  const auto kept = interval(0.01, -0.01, 0.03);
  const auto d = decide(reduced, reduced, kept, interval(-0.05, -0.08, -0.02));
  EXPECT_FALSE(d.loss_lost);
  EXPECT_TRUE(d.downstream_lost);
  EXPECT_EQ(d.verdict, Verdict::TradeOff);
  EXPECT_EQ(decide(reduced, reduced, kept, interval(-0.05, -0.08, 0.01)).verdict, Verdict::Win);
  EXPECT_EQ(decide(reduced, reduced, kept, interval(0.05, 0.02, 0.08)).verdict, Verdict::Win);
  EXPECT_FALSE(decide(reduced, reduced, kept).downstream_lost);  // not measured
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat
