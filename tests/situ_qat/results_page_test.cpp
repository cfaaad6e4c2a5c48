// The situ-qat page from synthetic ledger records: the decision table reads the paired bootstrap
// intervals as the protocol's rule says (trade-off when tails fall but loss rises; win when loss
// holds), and a failure counts against its arm without entering the pairs.
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

std::string verdict(double loss_shift, bool with_failure) {
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  RunRecords records;
  records.manifest = {{"parameters", protocol.parameters_for("smoke")}, {"units_planned", with_failure ? 8 : 6}};
  const double noise[] = {0.0, 0.01, -0.01};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t seed = 6101 + static_cast<std::uint64_t>(i);
    records.ledger.records.push_back(result("swiglu", seed, 10.0 + noise[i], 0.2, 3.0 + noise[i]));
    records.ledger.records.push_back(result("situ-glu", seed, 5.0 + noise[i], 0.1, 3.0 + loss_shift + 2 * noise[i]));
  }
  if (with_failure) {
    records.ledger.records.push_back({{"kind", "failure"}, {"unit", "arm=situ-glu/seed=6104"}, {"reason", "nan-loss"},
                                      {"data", {{"arm", "situ-glu"}, {"seed", 6104}}}});
    records.ledger.records.push_back(result("swiglu", 6104, 10.0, 0.2, 3.0));
  }
  report::Page page;
  add_results(protocol, records, page);
  const auto& decision = table(page, "decision");
  if (with_failure) {
    bool counted = false;
    for (const auto& row : decision.rows) {
      if (std::get<std::string>(row[0].value).find("numerical failures of situ-glu") != std::string::npos) {
        counted = std::get<std::string>(row[1].value) == "1";
      }
    }
    EXPECT_TRUE(counted);
    EXPECT_EQ(std::get<std::int64_t>(table(page, "paired-comparisons").rows[0][2].value), 3);  // the failed seed is unpaired
  }
  return std::get<std::string>(decision.rows.back().back().value);
}

TEST(ResultsPage, ReducedTailsWithALossIncreaseAreATradeOff) { EXPECT_EQ(verdict(0.1, false), "trade-off, not a win"); }

TEST(ResultsPage, ReducedTailsWithoutALossIncreaseAreAWin) { EXPECT_EQ(verdict(-0.1, false), "win"); }

TEST(ResultsPage, AFailureCountsAgainstItsArmAndStaysOutOfThePairs) { EXPECT_EQ(verdict(-0.1, true), "win"); }

}  // namespace
}  // namespace k3lab::experiments::situ_qat
