// The decision gate's hardware rule (gate.hpp, docs/verdicts.md): a full-profile run whose every run
// has ended still gets no decision when its units ran on two hardware fingerprints, unless the
// protocol's controls allow it; one fingerprint, or none recorded, leaves the gate open.
#include <gtest/gtest.h>

#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/experiments/training/gate.hpp"

namespace k3lab::experiments::training {
namespace {

nlohmann::json gate_machine(const std::string& accelerator) {
  core::HardwareFacts facts;
  facts.cpu_model = "AMD EPYC 9654";
  facts.logical_cores = 16;
  facts.device = "cuda";
  facts.accelerator = core::AcceleratorFacts{accelerator, 1, "550.54.15", "12.1"};
  facts.libtorch = "2.1.0";
  facts.build = "0.1.0; test";
  return core::fingerprint_json(facts);
}

nlohmann::json gate_terminal(const std::string& arm, std::uint64_t seed) {
  return {{"kind", "result"},
          {"unit", "arm=" + arm + "/seed=" + std::to_string(seed)},
          {"spec", {{"arm", arm}, {"seed", seed}}}};
}

// Every run of arms t and c over seeds 1 and 2 ended; `hardware_of(arm, seed)` says where each ran.
struct GateRun {
  RunRecords records;
  RunOutcomes outcomes;
};

template <class HardwareOf>
GateRun gate_run(HardwareOf hardware_of, const std::string& profile = "full") {
  GateRun run;
  run.records.manifest = {{"profile", profile}, {"units_planned", 4}};
  std::vector<nlohmann::json> terminal;
  for (std::uint64_t seed : {1u, 2u}) {
    for (const std::string arm : {"t", "c"}) {
      terminal.push_back(gate_terminal(arm, seed));
      nlohmann::json attempt = {{"kind", "attempt"}, {"unit", terminal.back().at("unit")}};
      const nlohmann::json hardware = hardware_of(arm, seed);
      if (!hardware.is_null()) attempt["hardware"] = hardware;
      run.records.ledger.records.push_back(attempt);
      run.records.ledger.records.push_back(terminal.back());
    }
  }
  run.outcomes = classify_runs(terminal, 4, {"t", "c"});
  return run;
}

core::Protocol gate_protocol(const std::string& mixed_hardware = "") {
  core::Protocol protocol;
  protocol.document = {{"id", "situ-qat"}};
  if (!mixed_hardware.empty()) protocol.document["controls"] = {{"mixed_hardware", mixed_hardware}};
  return protocol;
}

const nlohmann::json kH200 = gate_machine("NVIDIA H200");
const nlohmann::json kA100 = gate_machine("NVIDIA A100-SXM4-80GB");

// The treatment on one GPU model, the control on another: the treatment's "advantage" could be the GPU's.
TEST(HardwareGate, ArmsOnTwoFingerprintsGetNoDecisionAtFullProfile) {
  const auto run = gate_run([](const std::string& arm, std::uint64_t) { return arm == "t" ? kH200 : kA100; });
  ASSERT_TRUE(run.outcomes.complete());
  report::Page page;
  EXPECT_FALSE(decision_readable(run.outcomes, gate_protocol(), run.records, page));
  ASSERT_FALSE(page.blocks.empty());
  EXPECT_EQ(page.blocks.back().markdown.rfind("Decision rule: not evaluated: units ran on 2 hardware fingerprints;", 0),
            0u)
      << page.blocks.back().markdown;
}

// One seed's pair moved to another machine: still two fingerprints within the comparison.
TEST(HardwareGate, OneSeedOnOtherHardwareIsEnoughToWithholdTheDecision) {
  const auto run = gate_run([](const std::string&, std::uint64_t seed) { return seed == 2 ? kA100 : kH200; });
  report::Page page;
  EXPECT_FALSE(decision_readable(run.outcomes, gate_protocol(), run.records, page));
  EXPECT_FALSE(decision_readable(run.outcomes, gate_protocol("excluded"), run.records, page));
}

TEST(HardwareGate, TheProtocolMayAllowMixedHardware) {
  const auto run = gate_run([](const std::string& arm, std::uint64_t) { return arm == "t" ? kH200 : kA100; });
  report::Page page;
  EXPECT_TRUE(decision_readable(run.outcomes, gate_protocol("allowed"), run.records, page));
  EXPECT_TRUE(page.blocks.empty());
}

TEST(HardwareGate, OneFingerprintOrNoneRecordedLeavesTheGateOpen) {
  const auto same = gate_run([](const std::string&, std::uint64_t) { return kH200; });
  report::Page page;
  EXPECT_TRUE(decision_readable(same.outcomes, gate_protocol(), same.records, page));
  const auto old = gate_run([](const std::string&, std::uint64_t) { return nlohmann::json(); });
  EXPECT_TRUE(decision_readable(old.outcomes, gate_protocol(), old.records, page));
  EXPECT_TRUE(page.blocks.empty());
}

// The smoke profile's rule comes first: its page says smoke, not hardware.
TEST(HardwareGate, OnSmokeTheSmokeRuleSpeaks) {
  const auto run = gate_run([](const std::string& arm, std::uint64_t) { return arm == "t" ? kH200 : kA100; }, "smoke");
  report::Page page;
  EXPECT_FALSE(decision_readable(run.outcomes, gate_protocol(), run.records, page));
  EXPECT_NE(page.blocks.back().markdown.find("not evaluated on the smoke profile"), std::string::npos);
}

}  // namespace
}  // namespace k3lab::experiments::training
