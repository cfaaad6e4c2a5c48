#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "k3lab/sim/trace_file.hpp"
#include "k3lab/sim/workload.hpp"

namespace k3lab::sim {
namespace {

MixSpec one_phase(ArrivalProcess arrival, LengthDistribution prompt, LengthDistribution output) {
  MixSpec mix;
  mix.id = "test";
  Phase phase;
  phase.arrival = arrival;
  phase.classes = {{"only", 1.0, prompt, output}};
  mix.phases = {phase};
  return mix;
}

LengthDistribution fixed(std::uint32_t v) {
  LengthDistribution d;
  d.kind = LengthDistribution::Kind::Fixed;
  d.value = v;
  return d;
}

TEST(Workload, GammaGapsHaveTheRequestedRateAndCv) {
  for (double cv : {1.0, 3.0}) {
    const MixSpec mix = one_phase({ArrivalProcess::Kind::Gamma, 50.0, cv}, fixed(1), fixed(1));
    const Trace t = generate_trace(mix, 200000, 17, "gamma");
    std::vector<double> gaps;
    std::int64_t previous = 0;
    for (const auto& r : t.records) {
      gaps.push_back(static_cast<double>(r.arrival_us - previous) / 1e6);
      previous = r.arrival_us;
    }
    double mean = 0, var = 0;
    for (double g : gaps) mean += g;
    mean /= static_cast<double>(gaps.size());
    for (double g : gaps) var += (g - mean) * (g - mean);
    var /= static_cast<double>(gaps.size() - 1);
    EXPECT_NEAR(mean, 1.0 / 50.0, 0.03 / 50.0) << "cv " << cv;
    EXPECT_NEAR(std::sqrt(var) / mean, cv, 0.05 * cv) << "cv " << cv;
  }
}

TEST(Workload, LognormalLengthsHaveTheirMedianAndStayClamped) {
  LengthDistribution d;
  d.kind = LengthDistribution::Kind::LogNormal;
  d.median = 384;
  d.sigma = 0.9;
  d.min = 8;
  d.max = 4000;
  const Trace t = generate_trace(one_phase({ArrivalProcess::Kind::Poisson, 10.0, 1.0}, d, fixed(3)), 100000, 3, "ln");
  std::vector<std::uint32_t> prompts;
  for (const auto& r : t.records) {
    prompts.push_back(r.prompt_tokens);
    ASSERT_GE(r.prompt_tokens, 8u);
    ASSERT_LE(r.prompt_tokens, 4000u);
    ASSERT_EQ(r.output_tokens, 3u);
  }
  std::nth_element(prompts.begin(), prompts.begin() + 50000, prompts.end());
  EXPECT_NEAR(prompts[50000], 384.0, 384.0 * 0.02);
}

TEST(Workload, PhasesSplitArrivalsAndShiftTheMix) {
  MixSpec mix;
  mix.id = "shift";
  Phase short_phase;
  short_phase.arrival_fraction = 0.3;
  short_phase.arrival = {ArrivalProcess::Kind::Poisson, 100.0, 1.0};
  short_phase.classes = {{"short", 1.0, fixed(10), fixed(1)}};
  Phase long_phase;
  long_phase.arrival_fraction = 0.7;
  long_phase.arrival = {ArrivalProcess::Kind::Poisson, 1.0, 1.0};
  long_phase.classes = {{"a", 1.0, fixed(1000), fixed(1)}, {"b", 3.0, fixed(2000), fixed(1)}};
  mix.phases = {short_phase, long_phase};
  EXPECT_EQ(phase_counts(mix, 1001), (std::vector<std::uint64_t>{300, 701}));
  const Trace t = generate_trace(mix, 10000, 8, "shift");
  ASSERT_EQ(t.size(), 10000u);
  std::size_t b = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i < 3000) {
      ASSERT_EQ(t.records[i].prompt_tokens, 10u);
    } else {
      b += t.records[i].prompt_tokens == 2000;
    }
  }
  EXPECT_NEAR(static_cast<double>(b) / 7000.0, 0.75, 0.02);
  // The second phase arrives a hundred times slower.
  const double first = static_cast<double>(t.records[2999].arrival_us);
  const double second = static_cast<double>(t.records[9999].arrival_us - t.records[2999].arrival_us);
  EXPECT_GT(second / first, 100.0 * 7.0 / 3.0 * 0.8);
}

TEST(Workload, SameSeedSameTraceOtherSeedOtherTrace) {
  LengthDistribution u;
  u.kind = LengthDistribution::Kind::Uniform;
  u.min = 1;
  u.max = 100;
  const MixSpec mix = one_phase({ArrivalProcess::Kind::Gamma, 5.0, 2.0}, u, u);
  EXPECT_EQ(trace_sha256(generate_trace(mix, 5000, 42, "s")), trace_sha256(generate_trace(mix, 5000, 42, "s")));
  EXPECT_NE(trace_sha256(generate_trace(mix, 5000, 42, "s")), trace_sha256(generate_trace(mix, 5000, 43, "s")));
}

TEST(Workload, InvalidMixesAreRejectedByName) {
  MixSpec mix = one_phase({ArrivalProcess::Kind::Poisson, 5.0, 1.0}, fixed(0), fixed(1));
  try {
    mix.validate();
    FAIL() << "an empty prompt must be rejected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("prompt_tokens"), std::string::npos);
  }
  mix = one_phase({ArrivalProcess::Kind::Poisson, 5.0, 1.0}, fixed(1), fixed(1));
  mix.phases[0].arrival_fraction = 0.5;
  EXPECT_THROW(mix.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::sim
