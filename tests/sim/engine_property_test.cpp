// Engine properties on random small traces: allocator invariants after every iteration, request
// accounting identities, determinism, and page growth against a closed-form page count.
#include <gtest/gtest.h>

#include "k3lab/core/rng.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/result_json.hpp"

namespace k3lab::sim {
namespace {

EngineConfig small_engine(double drain_factor) {
  EngineConfig e;
  e.step_us = 1000;
  e.prefill_tokens_per_step = 16;
  e.drain_factor = drain_factor;
  e.copy_bytes_per_second = 5e5;
  e.reference_state_bytes = 40;
  e.reference_page_tokens = 4;
  e.reference_page_bytes = 8;
  e.reference_watermark_bytes = 8;
  e.time_series_points = 20;
  e.check_invariants_every_iteration = true;
  return e;
}

std::vector<PolicyConfig> small_policies() {
  std::vector<PolicyConfig> out(4);
  out[0].kind = PolicyKind::FixedSplit;
  out[0].fixed = FixedSplitPool::split(1200, 40, 8, 4, 0.9, 0.01);
  out[1].kind = PolicyKind::Unified;
  out[1].unified = {1200, 40, 8, 4, 8, CompactionMode::OnShortfall};
  out[2].kind = PolicyKind::Unified;
  out[2].unified = {1200, 40, 8, 4, 8, CompactionMode::Eager};
  out[3].kind = PolicyKind::PaddedSinglePage;
  out[3].padded = {1200, 5, 48, 1, 1, 25, 1};
  return out;
}

Trace random_trace(std::uint64_t seed, std::size_t n) {
  core::Rng rng(seed);
  Trace t;
  t.source = "random";
  std::int64_t now = 0;
  for (std::size_t i = 0; i < n; ++i) {
    now += static_cast<std::int64_t>(rng.below(3000));
    const bool long_request = rng.bernoulli(0.2);
    const auto prompt = static_cast<std::uint32_t>(1 + rng.below(long_request ? 200 : 20));
    const auto output = static_cast<std::uint32_t>(rng.below(long_request ? 30 : 12));
    t.records.push_back({now, prompt, output});
  }
  return t;
}

TEST(EngineProperty, InvariantsAndAccountingHoldOnRandomTraces) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const Trace t = random_trace(seed, 300);
    for (double drain : {0.05, 2.0}) {
      for (const PolicyConfig& policy : small_policies()) {
        SimResult r;
        ASSERT_NO_THROW(r = simulate(t, small_engine(drain), policy)) << "seed " << seed << " " << policy_kind_name(policy.kind);
        EXPECT_EQ(r.arrivals, t.size());
        // Every arrival is admitted once, or still queued unadmitted (a miss), or dropped as too large.
        EXPECT_EQ(r.admitted + r.misses + r.dropped_too_large, r.arrivals);
        // Every admitted request completed, is still running, waits requeued after a preemption,
        // or was dropped at decode.
        EXPECT_EQ(r.completed + r.running_at_end + r.requeued_at_end + r.dropped_at_decode, r.admitted);
        EXPECT_LE(r.admitted_by_last_arrival, r.admitted);
        EXPECT_LE(r.requests_deferred, r.memory_rejections);
        EXPECT_LE(r.queue_delay_p50_us, r.queue_delay_p90_us);
        EXPECT_LE(r.queue_delay_p90_us, r.queue_delay_p99_us);
        EXPECT_LE(r.queue_delay_p99_us, r.queue_delay_max_us);
        if (!r.deadline_hit) {
          EXPECT_EQ(r.misses, 0u);
          EXPECT_EQ(r.running_at_end, 0u);
        } else {
          EXPECT_GT(r.end_us, r.deadline_us);
        }
        if (policy.kind != PolicyKind::Unified) {
          EXPECT_EQ(r.bytes_moved, 0);
        }
        EXPECT_LE(r.series.t_us.size(), static_cast<std::size_t>(20 * (1 + drain)) + 2);
      }
    }
  }
}

TEST(EngineProperty, SameInputsGiveTheSameBytes) {
  const Trace t = random_trace(99, 400);
  for (const PolicyConfig& policy : small_policies()) {
    const std::string a = result_to_json(simulate(t, small_engine(2.0), policy)).dump();
    const std::string b = result_to_json(simulate(t, small_engine(2.0), policy)).dump();
    EXPECT_EQ(a, b);
  }
}

TEST(EngineProperty, PageGrowthMatchesTheClosedFormPageCount) {
  // One request alone: in prefill iteration i it holds ceil(p/G) pages; in decode step j it holds
  // ceil((p + j)/G) pages. The time-weighted used bytes must equal that sum, computed here directly.
  // A one-token request arriving at 1000 s gives the trace a duration, so the drain rule never bites.
  core::Rng rng(5);
  for (int trial = 0; trial < 300; ++trial) {
    const auto g = static_cast<std::uint32_t>(1 + rng.below(9));
    const auto p = static_cast<std::uint32_t>(1 + rng.below(60));
    const auto o = static_cast<std::uint32_t>(rng.below(40));
    const std::uint32_t chunk = 16;
    EngineConfig e = small_engine(2.0);
    e.prefill_tokens_per_step = chunk;
    e.time_series_points = 0;
    PolicyConfig policy;
    policy.kind = PolicyKind::FixedSplit;
    policy.fixed.state_bytes = 40;
    policy.fixed.page_bytes = 8;
    policy.fixed.page_tokens = g;
    policy.fixed.state_slots = 1;
    policy.fixed.kv_pages = 1000;
    policy.fixed.budget_bytes = 40 + 8000;
    Trace t;
    const std::int64_t late = 1'000'000'000;
    t.records = {{0, p, o}, {late, 1, 0}};
    const SimResult r = simulate(t, e, policy);
    const std::uint32_t prefill = (p + chunk - 1) / chunk;
    double byte_iterations = 40 + 8;  // the late request: one iteration, one page
    for (std::uint32_t i = 0; i < prefill; ++i) byte_iterations += 40 + 8.0 * ((p + g - 1) / g);
    for (std::uint32_t j = 1; j <= o; ++j) byte_iterations += 40 + 8.0 * ((p + j + g - 1) / g);
    ASSERT_EQ(r.end_us, late + 1000) << "p=" << p << " o=" << o << " G=" << g;
    // Loop passes: the request's iterations, its release (then the idle jump), the late request's
    // iteration and its release.
    ASSERT_EQ(r.iterations, prefill + o + 3u) << "p=" << p << " o=" << o << " G=" << g;
    ASSERT_NEAR(r.used_bytes_time_weighted * static_cast<double>(r.end_us), byte_iterations * 1000, 1e-6 * byte_iterations * 1000)
        << "p=" << p << " o=" << o << " G=" << g;
  }
}

TEST(EngineProperty, RejectsBadConfigAndBadTraces) {
  EngineConfig e = small_engine(2.0);
  e.step_us = 0;
  Trace t;
  t.records = {{0, 1, 1}};
  EXPECT_THROW(simulate(t, e, small_policies()[0]), std::invalid_argument);
  Trace backwards;
  backwards.records = {{10, 1, 1}, {5, 1, 1}};
  EXPECT_THROW(simulate(backwards, small_engine(2.0), small_policies()[0]), std::invalid_argument);
}

}  // namespace
}  // namespace k3lab::sim
