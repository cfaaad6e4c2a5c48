// situ-qat's page reads the hardware rule of the shared gate (docs/verdicts.md, "Hardware"): the same
// three winning pairs give "win" when both arms ran on one fingerprint and no decision when SiTU-GLU
// ran on another GPU than SwiGLU, every run ended, at a non-smoke profile.
#include <gtest/gtest.h>

#include "k3lab/core/hardware_fingerprint.hpp"
#include "k3lab/core/protocol.hpp"
#include "situ_qat/page.hpp"
#include "situ_qat/parameters.hpp"

namespace k3lab::experiments::situ_qat {
namespace {

nlohmann::json hw_gpu(const std::string& model) {
  core::HardwareFacts facts;
  facts.cpu_model = "AMD EPYC 9654";
  facts.logical_cores = 16;
  facts.device = "cuda";
  facts.accelerator = core::AcceleratorFacts{model, 1, "550.54.15", "12.1"};
  facts.libtorch = "2.1.0";
  facts.build = "0.1.0; test";
  return core::fingerprint_json(facts);
}

nlohmann::json hw_activations(double hidden_p999, double output_error) {
  return {{"hidden", {{"p99", hidden_p999 / 2}, {"p999", hidden_p999}}},
          {"inputs", {{"p99", 2.0}, {"p999", 3.0}}},
          {"quantization_error", {{"weights", 0.1}, {"inputs", 0.03}, {"hidden", 0.03}, {"outputs", output_error}}},
          {"saturation", {{"gate", 0.01}, {"up", 0.0}, {"both", 0.005}}}};
}

nlohmann::json hw_result(const std::string& arm, std::uint64_t seed, double p999, double error, double loss) {
  nlohmann::json evaluations = nlohmann::json::array();
  for (const auto& [tokens, at] : {std::pair{256, loss + 1}, std::pair{512, loss}}) {
    evaluations.push_back(
        {{"tokens", tokens}, {"validation_loss", at}, {"probes", {{"activations", hw_activations(p999, error)}}}});
  }
  return {
      {"kind", "result"},
      {"unit", "arm=" + arm + "/seed=" + std::to_string(seed)},
      {"data",
       {{"arm", arm}, {"seed", seed}, {"loss_spikes", {{"count", 0}}}, {"training", {{"evaluations", evaluations}}}}}};
}

// Three seeds where SiTU-GLU halves the tails and lowers the loss (a "win" on one machine); each
// unit's attempt records `situ_glu_gpu` or `swiglu_gpu`.
report::Page hw_page(const std::string& situ_glu_gpu, const std::string& swiglu_gpu) {
  const auto protocol =
      core::load_protocol(std::filesystem::path(K3LAB_SOURCE_DIR) / "experiments/situ-qat.json", &parameter_schema());
  RunRecords records;
  records.manifest = {{"profile", "full"}, {"parameters", protocol.parameters_for("smoke")}, {"units_planned", 6}};
  const double noise[] = {0.0, 0.01, -0.01};
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t seed = 6101 + static_cast<std::uint64_t>(i);
    for (const auto& result : {hw_result("swiglu", seed, 10.0 + noise[i], 0.2, 3.0 + noise[i]),
                               hw_result("situ-glu", seed, 5.0 + noise[i], 0.1, 2.9 + 2 * noise[i])}) {
      const bool situ_glu = result.at("data").at("arm") == "situ-glu";
      records.ledger.records.push_back({{"kind", "attempt"},
                                        {"unit", result.at("unit")},
                                        {"hardware", hw_gpu(situ_glu ? situ_glu_gpu : swiglu_gpu)}});
      records.ledger.records.push_back(result);
    }
  }
  report::Page page;
  add_results(protocol, records, page);
  return page;
}

bool hw_has_table(const report::Page& page, const std::string& id) {
  for (const auto& b : page.blocks) {
    if (b.kind == report::Block::Kind::Table && b.table.id == id) return true;
  }
  return false;
}

TEST(HardwareDecision, OneFingerprintReadsTheDecision) {
  const auto page = hw_page("NVIDIA H200", "NVIDIA H200");
  ASSERT_TRUE(hw_has_table(page, "decision"));
  for (const auto& b : page.blocks) {
    if (b.kind == report::Block::Kind::Table && b.table.id == "decision") {
      EXPECT_EQ(std::get<std::string>(b.table.rows.back().back().value), "win");
    }
  }
}

TEST(HardwareDecision, ArmsOnDifferentGpusGetNoDecision) {
  const auto page = hw_page("NVIDIA H200", "NVIDIA A100-SXM4-80GB");
  EXPECT_FALSE(hw_has_table(page, "decision"));
  bool said = false;
  for (const auto& b : page.blocks) {
    said = said || b.markdown.rfind("Decision rule: not evaluated: units ran on 2 hardware fingerprints", 0) == 0;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace k3lab::experiments::situ_qat
