// The hardware check (experiments/hardware_check.hpp) on hand-built ledgers: units on two
// fingerprints flag the page, one fingerprint gives one line, a unit counts the attempt that produced
// its terminal record (the last one of its worker), and a ledger from before fingerprints says "not
// recorded" without a flag.
#include <gtest/gtest.h>

#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/experiments/hardware_check.hpp"
#include "test_protocol_fixture.hpp"

namespace k3lab::experiments {
namespace {

nlohmann::json hw_machine(const std::string& cpu, long cores) {
  core::HardwareFacts facts;
  facts.cpu_model = cpu;
  facts.logical_cores = cores;
  facts.device = "cpu";
  facts.libtorch = "1.13.0";
  facts.build = "0.1.0; test";
  return core::fingerprint_json(facts);
}

const nlohmann::json kMachineA = hw_machine("AMD EPYC 7B13", 2);
const nlohmann::json kMachineB = hw_machine("Intel Xeon Gold 6338", 2);

nlohmann::json hw_attempt(const std::string& unit, const nlohmann::json& hardware, const std::string& worker = "") {
  nlohmann::json r = {{"kind", "attempt"}, {"unit", unit}};
  if (!hardware.is_null()) r["hardware"] = hardware;
  if (!worker.empty()) r["worker"] = worker;
  return r;
}

nlohmann::json hw_result(const std::string& unit, const std::string& worker = "") {
  nlohmann::json r = {{"kind", "result"}, {"unit", unit}, {"data", nlohmann::json::object()}};
  if (!worker.empty()) r["worker"] = worker;
  return r;
}

RunRecords hw_records(const std::vector<nlohmann::json>& ledger) {
  RunRecords records;
  records.manifest = {{"profile", "full"}, {"units_planned", 4}};
  records.ledger.records = core::LedgerRecords(ledger);
  return records;
}

core::Protocol hw_protocol(nlohmann::json controls = nullptr) {
  core::Protocol protocol;
  protocol.document = testing::minimal_protocol();
  if (!controls.is_null()) protocol.document["controls"] = controls;
  return protocol;
}

std::string hw_page_text(const report::Page& page) {
  std::string text;
  for (const auto& block : page.blocks) text += block.markdown + "\n";
  for (const auto& block : page.reproduce) text += block.markdown + "\n";
  return text;
}

TEST(HardwareCheck, TwoFingerprintsFlagThePageAndListEach) {
  const auto records = hw_records({hw_attempt("u=0", kMachineA), hw_result("u=0"), hw_attempt("u=1", kMachineB),
                                   hw_result("u=1"), hw_attempt("u=2", kMachineA), hw_result("u=2")});
  const auto groups = terminal_unit_hardware(records);
  ASSERT_EQ(groups.recorded.size(), 2u);
  EXPECT_TRUE(groups.mixed());
  EXPECT_EQ(groups.recorded[0].fingerprint, kMachineA);  // two units: listed first
  EXPECT_EQ(groups.recorded[0].units, 2u);
  EXPECT_EQ(groups.recorded[1].fingerprint, kMachineB);
  EXPECT_EQ(groups.recorded[1].units, 1u);

  report::Page page;
  page.status = "complete: 3 of 3 units";
  add_hardware_check(hw_protocol(), records, page);
  EXPECT_EQ(page.status.rfind("MIXED HARDWARE: the units ran on 2 hardware fingerprints", 0), 0u) << page.status;
  EXPECT_NE(page.status.find("; complete: 3 of 3 units"), std::string::npos) << page.status;
  ASSERT_EQ(page.blocks.size(), 1u);
  EXPECT_TRUE(page.reproduce.empty());
  const auto text = hw_page_text(page);
  EXPECT_NE(text.find("- 2 units: cpu AMD EPYC 7B13 (2 logical cores), device cpu, LibTorch 1.13.0 [id " +
                      kMachineA.at("id").get<std::string>() + "]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("- 1 unit: cpu Intel Xeon Gold 6338"), std::string::npos) << text;
}

TEST(HardwareCheck, AProtocolThatAllowsMixedHardwareIsStillFlagged) {
  const auto records =
      hw_records({hw_attempt("u=0", kMachineA), hw_result("u=0"), hw_attempt("u=1", kMachineB), hw_result("u=1")});
  EXPECT_TRUE(mixed_hardware_allowed(hw_protocol({{"mixed_hardware", "allowed"}})));
  EXPECT_FALSE(mixed_hardware_allowed(hw_protocol({{"mixed_hardware", "excluded"}})));
  EXPECT_FALSE(mixed_hardware_allowed(hw_protocol()));
  report::Page page;
  add_hardware_check(hw_protocol({{"mixed_hardware", "allowed"}}), records, page);
  EXPECT_EQ(page.status.rfind("MIXED HARDWARE", 0), 0u);
  EXPECT_NE(page.status.find("the protocol allows it"), std::string::npos) << page.status;
}

TEST(HardwareCheck, OneFingerprintIsOneLineAndNoFlag) {
  const auto records =
      hw_records({hw_attempt("u=0", kMachineA), hw_result("u=0"), hw_attempt("u=1", kMachineA), hw_result("u=1")});
  EXPECT_FALSE(terminal_unit_hardware(records).mixed());
  report::Page page;
  page.status = "complete: 2 of 2 units";
  add_hardware_check(hw_protocol(), records, page);
  EXPECT_EQ(page.status, "complete: 2 of 2 units");
  EXPECT_TRUE(page.blocks.empty());  // the results' first block stays the module's
  ASSERT_EQ(page.reproduce.size(), 1u);
  EXPECT_EQ(page.reproduce[0].markdown,
            "**Hardware**: every unit with a recorded fingerprint ran on cpu AMD EPYC 7B13 "
            "(2 logical cores), device cpu, LibTorch 1.13.0 [id " +
                kMachineA.at("id").get<std::string>() + "] (2 units).");
}

// u=0 was tried on machine B, then redone on machine A, which wrote its terminal record: it counts as A.
TEST(HardwareCheck, AUnitCountsTheAttemptThatProducedItsTerminalRecord) {
  const auto records = hw_records({hw_attempt("u=0", kMachineB), hw_attempt("u=0", kMachineA), hw_result("u=0"),
                                   hw_attempt("u=1", kMachineA), hw_result("u=1"), hw_attempt("u=1", kMachineB)});
  const auto groups = terminal_unit_hardware(records);
  ASSERT_EQ(groups.recorded.size(), 1u);
  EXPECT_EQ(groups.recorded[0].fingerprint, kMachineA);
  EXPECT_EQ(groups.recorded[0].units, 2u);
}

// Shards are read one after another: the attempt of the worker that wrote the terminal record counts,
// not another worker's attempt read in between.
TEST(HardwareCheck, TheTerminalRecordsOwnWorkersAttemptCounts) {
  const auto records =
      hw_records({hw_attempt("u=0", kMachineA, "b"), hw_attempt("u=0", kMachineB, "a"), hw_result("u=0", "b")});
  const auto groups = terminal_unit_hardware(records);
  ASSERT_EQ(groups.recorded.size(), 1u);
  EXPECT_EQ(groups.recorded[0].fingerprint, kMachineA);
}

TEST(HardwareCheck, AnOldLedgerSaysNotRecordedWithoutAFlag) {
  const auto records = hw_records({hw_attempt("u=0", nullptr), hw_result("u=0"), hw_result("u=1")});
  const auto groups = terminal_unit_hardware(records);
  EXPECT_TRUE(groups.recorded.empty());
  EXPECT_EQ(groups.not_recorded, 2u);
  EXPECT_FALSE(groups.mixed());
  report::Page page;
  page.status = "complete: 2 of 2 units";
  add_hardware_check(hw_protocol(), records, page);
  EXPECT_EQ(page.status, "complete: 2 of 2 units");
  EXPECT_TRUE(page.blocks.empty());
  ASSERT_EQ(page.reproduce.size(), 1u);
  EXPECT_EQ(page.reproduce[0].markdown.rfind("**Hardware**: not recorded", 0), 0u) << page.reproduce[0].markdown;
}

// A run resumed by a build that records fingerprints: the units without one do not make it mixed.
TEST(HardwareCheck, UnitsWithoutAFingerprintBesideOneFingerprintAreNotMixed) {
  const auto records = hw_records({hw_result("u=0"), hw_attempt("u=1", kMachineA), hw_result("u=1")});
  report::Page page;
  page.status = "complete";
  add_hardware_check(hw_protocol(), records, page);
  EXPECT_EQ(page.status, "complete");
  EXPECT_NE(hw_page_text(page).find("(1 unit; 1 unit without a recorded fingerprint)"), std::string::npos)
      << hw_page_text(page);
}

TEST(HardwareCheck, ARunWithNoEndedUnitSaysNothing) {
  report::Page page;
  add_hardware_check(hw_protocol(), hw_records({hw_attempt("u=0", kMachineA)}), page);
  EXPECT_TRUE(page.blocks.empty());
  EXPECT_TRUE(page.reproduce.empty());
}

}  // namespace
}  // namespace k3lab::experiments
