// Protocol v2 at the simulator level: calibration traces (first phase only, their own seed stream),
// the tuning and sensitivity parameters and their cross-field rules, number labels, and a copy
// bandwidth that changes only the copy time when the order of events cannot depend on time.
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "k3lab/core/protocol.hpp"
#include "k3lab/core/rng.hpp"
#include "k3lab/sim/calibration.hpp"
#include "k3lab/sim/engine.hpp"
#include "k3lab/sim/parameters.hpp"

namespace k3lab::sim {
namespace {

const std::filesystem::path kCalibrationRoot = K3LAB_SOURCE_DIR;

nlohmann::json v2_parameters() {
  return core::load_protocol(kCalibrationRoot / "experiments/memory-pool.json", &parameter_schema())
      .parameters_for("smoke");
}

nlohmann::json fixed_length(std::uint32_t tokens) { return {{"kind", "fixed"}, {"value", tokens}}; }

// A two-phase mix whose phases cannot be confused: 7-token prompts first, 5000-token prompts after.
nlohmann::json two_phase_mix() {
  auto phase = [](double rate, const char* name, std::uint32_t prompt) {
    return nlohmann::json{{"arrival_fraction", 0.5},
                          {"arrival", {{"process", "poisson"}, {"rate_per_second", rate}}},
                          {"classes",
                           {{{"name", name},
                             {"weight", 1.0},
                             {"prompt_tokens", fixed_length(prompt)},
                             {"output_tokens", fixed_length(3)}}}}};
  };
  return {{"id", "shift-short-to-long"},
          {"description", "hand mix"},
          {"phases", {phase(50.0, "first", 7), phase(1.0, "second", 5000)}}};
}

TEST(Calibration, TracesUseOnlyTheFirstPhase) {
  nlohmann::json j = v2_parameters();
  j["mixes"][2] = two_phase_mix();
  j["fixed_split_tuning"]["arrivals_per_calibration_trace"] = 4000;
  const SimParameters p = parse_parameters(j);
  const Trace t = generate_calibration_trace(p, 2, 1);
  ASSERT_EQ(t.size(), 4000u);
  for (const auto& r : t.records) ASSERT_EQ(r.prompt_tokens, 7u);
  // Poisson at 50/s for every arrival: about 80 s for 4000 arrivals (the second phase's 1/s would
  // stretch half of them to 2000 s).
  EXPECT_GT(t.last_arrival_us(), 70'000'000);
  EXPECT_LT(t.last_arrival_us(), 90'000'000);
  // The decision trace of the same mix does reach the second phase.
  const Trace decision = generate_protocol_trace(p, 2, 1);
  EXPECT_EQ(decision.records.back().prompt_tokens, 5000u);
  const MixSpec pre = pre_shift_mix(p.mixes[2]);
  ASSERT_EQ(pre.phases.size(), 1u);
  EXPECT_EQ(pre.phases[0].arrival_fraction, 1.0);
  EXPECT_EQ(pre.phases[0].classes[0].name, "first");
}

TEST(Calibration, SeedStreamIsDistinctFromEveryDecisionTrace) {
  const SimParameters p = parse_parameters(v2_parameters());
  std::set<std::uint64_t> decision;
  for (std::size_t m = 0; m < 3; ++m) {
    for (std::size_t t = 0; t <= 50; ++t) decision.insert(trace_seed(p, m, t));
  }
  std::set<std::uint64_t> calibration;
  for (std::size_t m = 0; m < 3; ++m) {
    for (std::size_t k = 1; k <= 50; ++k) {
      const std::uint64_t seed = calibration_trace_seed(p, m, k);
      EXPECT_EQ(decision.count(seed), 0u) << "mix " << m << " calibration " << k;
      calibration.insert(seed);
    }
  }
  EXPECT_EQ(calibration.size(), 150u);
  EXPECT_EQ(calibration_trace_seed(p, 1, 2), core::stream_seed(p.seed, {kCalibrationStream, 1, 2}));
  EXPECT_EQ(generate_calibration_trace(p, 1, 2).generator_seed, calibration_trace_seed(p, 1, 2));
  EXPECT_EQ(calibration_trace_label(3), "calibration-03");
  // A single-phase mix's calibration trace has the mix's distributions but not a decision trace's arrivals.
  const Trace c = generate_calibration_trace(p, 0, 1);
  const Trace d = generate_protocol_trace(p, 0, 1);
  EXPECT_NE(c.records.front().arrival_us, d.records.front().arrival_us);
}

TEST(Calibration, NumberLabelsAreShortAndExact) {
  EXPECT_EQ(number_label(0.05), "0.05");
  EXPECT_EQ(number_label(0.1), "0.1");
  EXPECT_EQ(number_label(1.6), "1.6");
  EXPECT_EQ(number_label(1.92e12), "1.92e12");
  EXPECT_EQ(number_label(1.92e7), "1.92e7");
  EXPECT_EQ(number_label(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(number_label(2.5e-7), "2.5e-7");
  EXPECT_EQ(number_label(1e100), "1e100");
}

TEST(Calibration, TuningAndAFixedRatioExcludeEachOther) {
  const SimParameters p = parse_parameters(v2_parameters());
  ASSERT_TRUE(p.fixed_split_tuning.has_value());
  EXPECT_TRUE(p.policies[0].tuned_ratio);
  EXPECT_THROW(policy_config(p, p.policies[0]), std::invalid_argument);
  EXPECT_EQ(
      policy_config(p, with_ratio(p.policies[0], 0.9)).fixed.state_slots,
      FixedSplitPool::split(p.budget_bytes, p.model.state_bytes_per_request(),
                            p.model.mla_bytes_per_token() * p.page_tokens, p.page_tokens, 0.9, p.watermark_fraction)
          .state_slots);
  EXPECT_EQ(p.sensitivity_copy_bytes_per_second.size(), 2u);
  const auto sizes = derived_sizes(p);
  EXPECT_EQ(sizes["policies"]["fixed-split"]["candidates"].size(), p.fixed_split_tuning->ratios.size());

  auto expect_error = [](const nlohmann::json& j, const std::string& fragment) {
    try {
      parse_parameters(j);
      ADD_FAILURE() << "expected an error containing " << fragment;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  nlohmann::json both = v2_parameters();
  both["policies"][0]["state_to_kv_ratio"] = 0.9;
  expect_error(both, "exclude each other");
  nlohmann::json neither = v2_parameters();
  neither.erase("fixed_split_tuning");
  expect_error(neither, "required unless parameters.fixed_split_tuning");
  nlohmann::json unordered = v2_parameters();
  unordered["fixed_split_tuning"]["ratios"] = {0.5, 0.5};
  expect_error(unordered, "strictly increasing");
  nlohmann::json negative = v2_parameters();
  negative["fixed_split_tuning"]["ratios"] = {-0.5, 0.5};
  expect_error(negative, "fixed_split_tuning.ratios[0]");
  nlohmann::json no_unified = v2_parameters();
  no_unified["policies"][1]["kind"] = "padded-single-page";
  no_unified["policies"][1].erase("compaction");
  no_unified["policies"][1]["block_align_tokens"] = 16;
  expect_error(no_unified, "needs a unified policy");
}

// Every arrival but the last at t = 0 and the last long after the rest has drained: the engine's events
// are indexed by iteration, so the copy bandwidth cannot change which units move, only the copy time.
Trace burst_then_one(std::uint64_t seed) {
  core::Rng rng(seed);
  Trace t;
  t.source = "burst";
  for (int i = 0; i < 60; ++i) {
    const bool long_request = rng.bernoulli(0.3);
    t.records.push_back({0, static_cast<std::uint32_t>(1 + rng.below(long_request ? 120 : 12)),
                         static_cast<std::uint32_t>(rng.below(long_request ? 30 : 10))});
  }
  t.records.push_back({3'600'000'000, 4, 2});
  return t;
}

TEST(Calibration, CopyBandwidthChangesOnlyTheCopyTime) {
  EngineConfig e;
  e.step_us = 1000;
  e.prefill_tokens_per_step = 16;
  e.drain_factor = 2.0;
  e.reference_state_bytes = 40;
  e.reference_page_tokens = 4;
  e.reference_page_bytes = 8;
  e.reference_watermark_bytes = 8;
  e.check_invariants_every_iteration = true;
  PolicyConfig unified;
  unified.kind = PolicyKind::Unified;
  unified.unified = {600, 40, 8, 4, 8, CompactionMode::OnShortfall};
  const Trace t = burst_then_one(11);
  e.copy_bytes_per_second = 5e5;
  const SimResult fast = simulate(t, e, unified);
  e.copy_bytes_per_second = 5e3;
  const SimResult slow = simulate(t, e, unified);
  ASSERT_GT(fast.bytes_moved, 0) << "the trace must make the arena compact";
  EXPECT_EQ(slow.bytes_moved, fast.bytes_moved);
  EXPECT_EQ(slow.moves, fast.moves);
  EXPECT_EQ(slow.admitted, fast.admitted);
  EXPECT_EQ(slow.iterations, fast.iterations);
  // Copy time: bytes / bandwidth per iteration, rounded up to a microsecond in each iteration that moved.
  const double fast_us = static_cast<double>(fast.bytes_moved) * 1e6 / 5e5;
  const double slow_us = static_cast<double>(slow.bytes_moved) * 1e6 / 5e3;
  EXPECT_GE(static_cast<double>(fast.compaction_stall_us), fast_us);
  EXPECT_LE(static_cast<double>(fast.compaction_stall_us), fast_us + static_cast<double>(fast.moves));
  EXPECT_GE(static_cast<double>(slow.compaction_stall_us), slow_us);
  EXPECT_LE(static_cast<double>(slow.compaction_stall_us), slow_us + static_cast<double>(slow.moves));
}

}  // namespace
}  // namespace k3lab::sim
