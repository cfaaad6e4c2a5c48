// The situ-qat page from synthetic ledger records: the decision table reads the paired bootstrap
// intervals as the protocol's rule says (trade-off when tails fall but loss rises; win when loss
// holds), and the failure rule (docs/verdicts.md): a failure is a seed lost by its arm, never a pair,
// and an open run leaves no decision.
#include <gtest/gtest.h>

#include "k3lab/core/protocol.hpp"
#include "situ_qat/parameters.hpp"
#include "situ_qat/page.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

nlohmann::json activations(double hidden_p999, double output_error) {
  return {{"hidden", {{"p99", hidden_p999 / 2}, {"p999", hidden_p999}}},
          {"inputs", {{"p99", 2.0}, {"p999", 3.0}}},
          {"quantization_error", {{"weights", 0.1}, {"inputs", 0.03}, {"hidden", 0.03}, {"outputs", output_error}}},
          {"saturation", {{"gate", 0.01}, {"up", 0.0}, {"both", 0.005}}}};
}

nlohmann::json result(const std::string& arm, std::uint64_t seed, double p999, double error, double loss) {
  nlohmann::json evaluations = nlohmann::json::array();
  evaluations.push_back({{"tokens", 256}, {"validation_loss", loss + 1}, {"probes", {{"activations", activations(p999, error)}}}});
  evaluations.push_back({{"tokens", 512}, {"validation_loss", loss}, {"probes", {{"activations", activations(p999, error)}}}});
  return {{"kind", "result"},
          {"unit", "arm=" + arm + "/seed=" + std::to_string(seed)},
          {"data", {{"arm", arm}, {"seed", seed}, {"loss_spikes", {{"count", 0}}}, {"training", {{"evaluations", evaluations}}}}}};
}

const report::Table& table(const report::Page& page, const std::string& id) {
  for (const auto& b : page.blocks) {
    if (b.kind == report::Block::Kind::Table && b.table.id == id) return b.table;
  }
  throw std::runtime_error("no table " + id);
}

// The verdict over three paired seeds whose tails fall by half and whose loss shifts by `loss_shift`;
// with `failed_arm`, a fourth seed where that arm hit a NaN and the other arm completed.
std::string verdict(double loss_shift, const std::string& failed_arm = "") {
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  RunRecords records;
  records.manifest = {{"parameters", protocol.parameters_for("smoke")}, {"units_planned", failed_arm.empty() ? 6 : 8}};
  const double noise[] = {0.0, 0.01, -0.01};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t seed = 6101 + static_cast<std::uint64_t>(i);
    records.ledger.records.push_back(result("swiglu", seed, 10.0 + noise[i], 0.2, 3.0 + noise[i]));
    records.ledger.records.push_back(result("situ-glu", seed, 5.0 + noise[i], 0.1, 3.0 + loss_shift + 2 * noise[i]));
  }
  if (!failed_arm.empty()) {
    records.ledger.records.push_back({{"kind", "failure"}, {"unit", "arm=" + failed_arm + "/seed=6104"}, {"reason", "nan-loss"},
                                      {"data", {{"arm", failed_arm}, {"seed", 6104}}}});
    const std::string other = failed_arm == "situ-glu" ? "swiglu" : "situ-glu";
    records.ledger.records.push_back(result(other, 6104, other == "swiglu" ? 10.0 : 5.0, 0.2, 3.0));
  }
  report::Page page;
  add_results(protocol, records, page);
  const auto& decision = table(page, "decision");
  if (!failed_arm.empty()) {
    std::string lost;
    for (const auto& row : decision.rows) {
      if (std::get<std::string>(row[0].value).rfind("seeds lost by " + failed_arm, 0) == 0) {
        lost = std::get<std::string>(row[1].value) + " / " + std::get<std::string>(row[2].value);
      }
    }
    EXPECT_EQ(lost, "seed 6104 / 1");
    EXPECT_EQ(std::get<std::int64_t>(table(page, "paired-comparisons").rows[0][2].value), 3);  // the failed seed is unpaired
  }
  return std::get<std::string>(decision.rows.back().back().value);
}

TEST(ResultsPage, ReducedTailsWithALossIncreaseAreATradeOff) { EXPECT_EQ(verdict(0.1), "trade-off, not a win"); }

TEST(ResultsPage, ReducedTailsWithoutALossIncreaseAreAWin) { EXPECT_EQ(verdict(-0.1), "win"); }

// The same three winning pairs, plus a seed where SiTU-GLU diverged: the failure is a seed lost by
// SiTU-GLU, so the pairs that remain cannot make it a win.
TEST(ResultsPage, ATreatmentNanIsASeedLostByTheTreatmentAndNoWin) {
  EXPECT_EQ(verdict(-0.1, "situ-glu"),
            "not supported: situ-glu failed on seed 6104 (lost by situ-glu; a failure counts against its arm)");
}

// A seed where SwiGLU diverged counts against SwiGLU: the win over the three pairs stands, with the
// control's loss named.
TEST(ResultsPage, AControlNanIsASeedLostByTheControl) {
  EXPECT_EQ(verdict(-0.1, "swiglu"), "win; swiglu failed on seed 6104 (lost by the control)");
}

// One seed open: the decision waits, whatever the finished pairs say.
TEST(ResultsPage, AnOpenRunLeavesNoDecision) {
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  RunRecords records;
  records.manifest = {{"parameters", protocol.parameters_for("smoke")}, {"units_planned", 8}};
  for (std::uint64_t seed = 6101; seed <= 6103; ++seed) {
    records.ledger.records.push_back(result("swiglu", seed, 10.0, 0.2, 3.0));
    records.ledger.records.push_back(result("situ-glu", seed, 5.0 + 0.01 * static_cast<double>(seed - 6101), 0.1, 2.9));
  }
  records.ledger.records.push_back(result("swiglu", 6104, 10.0, 0.2, 3.0));
  report::Page page;
  add_results(protocol, records, page);
  EXPECT_THROW(table(page, "decision"), std::runtime_error);
  bool said = false;
  for (const auto& b : page.blocks) said = said || b.markdown.find("not evaluated (partial: 7 of 8 runs") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat
